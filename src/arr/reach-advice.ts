/**
 * What to tell a user whose *arr app cannot find autoscan by the name in its webhook URL: the one wording for
 * `autoscan webhook-url` (printed beside the URLs) and `autoscan arr connect` (when the app's test could not resolve
 * the name). The name `autoscan` is the compose file's service name, which only apps on the same Docker network resolve;
 * every other app needs an address it can reach, which the command's own flag sets.
 */

/**
 * The advice on the address 'autoscan'. `command` is how to give another address (`autoscan webhook-url --host`,
 * `autoscan arr connect --url`); `port` the one autoscan listens on.
 */
export function serviceNameAdvice(command: string, port: string | number): string {
  return (
    "The address 'autoscan' works for apps on the same Docker network (the same compose project). Apps in another " +
    "compose project: join both to one external network, or use the host's address and published port " +
    `(${command} 192.168.1.10:${String(port)}).`
  );
}

/**
 * The host an app's refusal says it could not resolve, when it says so: .NET's words on Linux (glibc "Name or service
 * not known", musl "Name does not resolve", "Temporary failure in name resolution", EAI_AGAIN's "Resource temporarily
 * unavailable"), Windows' "No such host is known", and Node's `ENOTFOUND`/`EAI_AGAIN` from apps or proxies written in
 * it. `undefined`: the refusal is about something else.
 */
export function unresolvedHost(refusal: string): string | undefined {
  const node = /\b(?:ENOTFOUND|EAI_AGAIN)\s+([^\s:/'")\]]+)/.exec(refusal);
  if (node?.[1]) return node[1];
  const dotnet =
    /(?:name or service not known|name does not resolve|no such host is known|temporary failure in name resolution|resource temporarily unavailable|nodename nor servname provided)[^(]*\(([^:)\s]+)(?::\d+)?\)/i.exec(
      refusal,
    );
  if (dotnet?.[1]) return dotnet[1];
  return /name or service not known|name does not resolve|no such host is known|temporary failure in name resolution|nodename nor servname/i.test(refusal)
    ? ""
    : undefined;
}
