/**
 * The anchors of a Markdown page's headings, as GitHub names them: lower case, punctuation dropped, spaces as hyphens
 * (headings inside code blocks are not headings).
 */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  let inCode = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) inCode = !inCode;
    const heading = inCode ? null : /^#{1,6} (.+)$/.exec(line);
    if (heading?.[1]) anchors.add(heading[1].trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, "").replaceAll(" ", "-"));
  }
  return anchors;
}
