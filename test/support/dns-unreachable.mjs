// Loaded with `node --import`: a resolver that cannot reach its DNS server, as in a container whose network has no
// working DNS. Every name lookup fails with getaddrinfo EAI_AGAIN after $AUTOSCAN_TEST_DNS_DELAY_MS (default 300);
// IP addresses still "resolve" to themselves, as they do without DNS. Nothing leaves the machine: the default Google
// endpoints never resolve.
import dns from "node:dns";
import { isIP } from "node:net";

const delayMs = Number(process.env.AUTOSCAN_TEST_DNS_DELAY_MS ?? 300);
const realLookup = dns.lookup;

dns.lookup = function lookup(hostname, options, callback) {
  // `listen("127.0.0.1")` looks its address up too: an IP resolves without a DNS server.
  if (isIP(hostname)) return realLookup.call(dns, hostname, options, callback);
  const done = typeof options === "function" ? options : callback;
  const error = Object.assign(new Error(`getaddrinfo EAI_AGAIN ${hostname}`), {
    code: "EAI_AGAIN",
    errno: -3001,
    syscall: "getaddrinfo",
    hostname,
  });
  setTimeout(() => done(error), delayMs);
};
