/**
 * A scripted chat completion on the wire: the `chat.completion` body a
 * non-streaming request gets, and the `chat.completion.chunk`s a streaming
 * one gets — a first chunk with the role, the text one word per chunk, each
 * tool call's `id`, `type` and `function.name` on its first fragment (the
 * first fragments of all calls in one chunk), its arguments in up to three
 * more fragments carrying only `index` and the piece, a chunk with the
 * finish reason, and, when asked for and known, a last chunk with the usage.
 */
import { render, type ScriptedToolCall } from "./scriptedToolCall.ts"

/** A tool call as the API sends it. */
export interface WireToolCall {
  readonly id: string
  readonly type: "function"
  readonly function: { readonly name: string; readonly arguments: string }
}

/** One completion's content, as both the body and the chunks carry it. */
export interface Completion {
  readonly id: string
  readonly model: string
  readonly text: string | null
  readonly refusal: string | null
  readonly calls: ReadonlyArray<WireToolCall> | undefined
  readonly finishReason: string
  readonly usage: object | undefined
}

/** The script's tool calls as sent, their ids (when not given) counted from `firstId`. */
export const toolCallsOf = (calls: ReadonlyArray<ScriptedToolCall>, firstId: number): ReadonlyArray<WireToolCall> =>
  calls.map((call, i) => {
    const { id, name, arguments: args } = render(call, firstId + i)
    return { id, type: "function", function: { name, arguments: args } }
  })

/** The `chat.completion` body of a non-streaming answer, as JSON. */
export const body = (completion: Completion): string => {
  const message = {
    role: "assistant",
    content: completion.text,
    refusal: completion.refusal,
    ...(completion.calls === undefined ? {} : { tool_calls: completion.calls })
  }
  return JSON.stringify({
    id: completion.id,
    object: "chat.completion",
    created: 0,
    model: completion.model,
    choices: [{ index: 0, message, finish_reason: completion.finishReason, logprobs: null }],
    ...(completion.usage === undefined ? {} : { usage: completion.usage })
  })
}

const wordsOf = (text: string): ReadonlyArray<string> => text.match(/\S+\s*|\s+/g) ?? []

/** Raw arguments in up to three pieces, cut on code points. */
const piecesOf = (text: string): ReadonlyArray<string> => {
  const points = Array.from(text)
  if (points.length === 0) return []
  const size = Math.max(1, Math.ceil(points.length / 3))
  const pieces: Array<string> = []
  for (let i = 0; i < points.length; i += size) pieces.push(points.slice(i, i + size).join(""))
  return pieces
}

/** The chunks of a streamed answer; the usage chunk only when `withUsage` and the completion has usage. */
export const chunksOf = (completion: Completion, withUsage: boolean): ReadonlyArray<object> => {
  const base = { id: completion.id, object: "chat.completion.chunk", created: 0, model: completion.model }
  const chunk = (delta: object, finishReason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }]
  })
  const out: Array<object> = [chunk({ role: "assistant", content: "", refusal: null })]
  for (const word of wordsOf(completion.text ?? "")) out.push(chunk({ content: word }))
  if (completion.refusal !== null) out.push(chunk({ refusal: completion.refusal }))
  const calls = completion.calls ?? []
  if (calls.length > 0) {
    out.push(
      chunk({
        tool_calls: calls.map((call, index) => ({
          index,
          id: call.id,
          type: "function",
          function: { name: call.function.name, arguments: "" }
        }))
      })
    )
    calls.forEach((call, index) => {
      for (const piece of piecesOf(call.function.arguments)) {
        out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }))
      }
    })
  }
  out.push(chunk({}, completion.finishReason))
  if (completion.usage !== undefined && withUsage) {
    out.push({ ...base, choices: [], usage: completion.usage })
  }
  return out
}
