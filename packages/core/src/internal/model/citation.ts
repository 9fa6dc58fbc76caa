/**
 * The sources a model's answer cites, as providers send them: a URL alone
 * (Perplexity's `citations`), or an object with a `url` or a `title` (a
 * document has no URL) and, when given, an excerpt of its `content` and the
 * span of the answer's text that cites it. Anything else is not a citation
 * and is left out.
 */
import type { Citation } from "../../ModelResponse.ts"
const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const optionalText = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

const optionalCount = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined

/** A citation as given (a URL, or an object with a string `url` or `title`), or `undefined` when it is neither. */
export const citationOf = (raw: unknown): Citation | undefined => {
  if (typeof raw === "string") return raw === "" ? undefined : { url: raw }
  if (!isRecord(raw)) return undefined
  const url = optionalText(raw.url)
  const title = optionalText(raw.title)
  if (url === undefined && title === undefined) return undefined
  const content = optionalText(raw.content)
  const startIndex = optionalCount(raw.startIndex)
  const endIndex = optionalCount(raw.endIndex)
  return {
    ...(url === undefined ? {} : { url }),
    ...(title === undefined ? {} : { title }),
    ...(content === undefined ? {} : { content }),
    ...(startIndex === undefined ? {} : { startIndex }),
    ...(endIndex === undefined ? {} : { endIndex })
  }
}

/** The citations of a reply: each readable one, in order; `undefined` when there are none. */
export const citationsOf = (raw: unknown): ReadonlyArray<Citation> | undefined => {
  if (!Array.isArray(raw)) return undefined
  const citations: Array<Citation> = []
  for (const entry of raw) {
    const citation = citationOf(entry)
    if (citation !== undefined) citations.push(citation)
  }
  return citations.length === 0 ? undefined : citations
}
