/**
 * What a chat completions message or delta says besides its tool calls, in
 * every dialect the compatible servers speak: `content` as a string or as a
 * list of parts (`text` parts are the answer, `thinking` parts — Mistral's,
 * whose `thinking` is text or a list of text parts — are reasoning; other
 * parts carry neither); reasoning as `reasoning_content` (DeepSeek, xAI,
 * Moonshot, Alibaba) or `reasoning` (Groq, Cerebras, OpenRouter), kept once
 * when a server sends both alike (OpenRouter's `reasoning_details` repeats
 * `reasoning` and is not read); `annotations` of type `url_citation` and a
 * top-level `citations` list of URLs (Perplexity) as citations. A field of
 * the wrong type is named in the answer so the caller can refuse it.
 */
import type { ModelResponse } from "@rolecraft/core"

/** A value read from a message or a delta, or the name of its field that is malformed and why. */
export type Read<A> = A | { readonly malformed: string }

export const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The text and reasoning of a `content` value: a string, nothing, or a list of parts. */
export interface Content {
  readonly text: string | undefined
  readonly reasoning: string | undefined
}

const noContent: Content = { text: undefined, reasoning: undefined }

/** A thinking part's text: a string, or a list of text parts joined. */
const thinkingOf = (thinking: unknown): string => {
  if (typeof thinking === "string") return thinking
  if (!Array.isArray(thinking)) return ""
  let text = ""
  for (const part of thinking) if (isRecord(part) && typeof part.text === "string") text += part.text
  return text
}

/** The text and reasoning of a `content` value; `field` names it for the failure of one of another type. */
export const contentOf = (content: unknown, field: string): Read<Content> => {
  if (typeof content === "string") return { text: content, reasoning: undefined }
  if (content === undefined || content === null) return noContent
  if (!Array.isArray(content)) return { malformed: `${field} is not a string or a list of parts` }
  let text = ""
  let reasoning = ""
  for (let i = 0; i < content.length; i++) {
    const part: unknown = content[i]
    if (!isRecord(part)) return { malformed: `${field}[${i}] is not an object` }
    if (part.type === "thinking") reasoning += thinkingOf(part.thinking)
    else if ((part.type === "text" || part.type === undefined) && typeof part.text === "string") text += part.text
  }
  return { text, reasoning: reasoning === "" ? undefined : reasoning }
}

/** Reasoning a message or delta carries, and the field it came in. */
export interface Reasoning {
  readonly reasoning: string | undefined
  readonly reasoningField: string | undefined
}

const noReasoning: Reasoning = { reasoning: undefined, reasoningField: undefined }

/**
 * The reasoning of a message or delta: its `reasoning_content`, its `reasoning`, and the thinking parts of its
 * content (`thinking`), in that order; the same text under both names is taken once.
 */
export const reasoningOf = (
  holder: Readonly<Record<string, unknown>>,
  thinking: string | undefined,
  field: string
): Read<Reasoning> => {
  const content = holder.reasoning_content
  const plain = holder.reasoning
  if (content === undefined && plain === undefined && thinking === undefined) return noReasoning
  if (content !== undefined && content !== null && typeof content !== "string") {
    return { malformed: `${field}.reasoning_content is not a string` }
  }
  if (plain !== undefined && plain !== null && typeof plain !== "string") {
    return { malformed: `${field}.reasoning is not a string` }
  }
  let reasoning = ""
  let reasoningField: string | undefined
  if (typeof content === "string" && content !== "") {
    reasoning = content
    reasoningField = "reasoning_content"
  }
  if (typeof plain === "string" && plain !== "" && plain !== content) {
    reasoning += plain
    reasoningField ??= "reasoning"
  }
  if (thinking !== undefined && thinking !== "") {
    reasoning += thinking
    reasoningField ??= "thinking"
  }
  return reasoning === "" ? noReasoning : { reasoning, reasoningField }
}

const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined

/**
 * The citations of a message or delta: its `url_citation` annotations (`{ url, title, content, start_index,
 * end_index }`, nested under `url_citation` as OpenAI sends them, or flat), then the chunk's or completion's
 * top-level `citations` (URLs). Entries of other kinds are not citations; `undefined` when there are none.
 */
export const citationsOf = (
  annotations: unknown,
  topLevel: unknown
): ReadonlyArray<ModelResponse.Citation | string> | undefined => {
  let citations: Array<ModelResponse.Citation | string> | undefined
  if (Array.isArray(annotations)) {
    for (const annotation of annotations) {
      if (!isRecord(annotation) || annotation.type !== "url_citation") continue
      const body = isRecord(annotation.url_citation) ? annotation.url_citation : annotation
      if (typeof body.url !== "string") continue
      const startIndex = count(body.start_index)
      const endIndex = count(body.end_index)
      citations ??= []
      citations.push({
        url: body.url,
        ...(typeof body.title === "string" ? { title: body.title } : {}),
        ...(typeof body.content === "string" ? { content: body.content } : {}),
        ...(startIndex === undefined ? {} : { startIndex }),
        ...(endIndex === undefined ? {} : { endIndex })
      })
    }
  }
  if (Array.isArray(topLevel)) {
    for (const url of topLevel) {
      if (typeof url !== "string" || url === "") continue
      citations ??= []
      citations.push(url)
    }
  }
  return citations
}

/**
 * The parts of a chat completions usage object the API reports in its details: cached input
 * (`prompt_tokens_details.cached_tokens`, a part of `prompt_tokens`) and reasoning
 * (`completion_tokens_details.reasoning_tokens`, a part of `completion_tokens`); a part that is absent or not
 * a count is left out (never 0).
 */
export const usagePartsOf = (
  usage: Readonly<Record<string, unknown>>
): { cachedInputTokens?: number; reasoningTokens?: number } => {
  const parts: { cachedInputTokens?: number; reasoningTokens?: number } = {}
  const prompt = usage.prompt_tokens_details
  const completion = usage.completion_tokens_details
  const cached = isRecord(prompt) ? count(prompt.cached_tokens) : undefined
  const reasoning = isRecord(completion) ? count(completion.reasoning_tokens) : undefined
  if (cached !== undefined) parts.cachedInputTokens = cached
  if (reasoning !== undefined) parts.reasoningTokens = reasoning
  return parts
}
