/**
 * The stream joiner: the chunks a streaming provider yields — text and
 * refusal pieces, tool-call fragments by index, and on some chunks the
 * finish reason, usage and model — become the stream parts callers see
 * (text deltas, tool calls started as soon as their id and name are known,
 * their argument pieces) and, at the end, the whole response as a
 * `Finished` part, normalised as a non-streamed answer is. It refuses a
 * malformed chunk or a tool call whose name never arrived (EXECUTION) and a
 * stream that ends without a finish reason (TRANSIENT: cut off).
 * `LanguageModel` re-exports the types.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type ActionError, ExecutionFailure, isActionError, TransientFailure } from "../../ActionError.ts"
import type { ToolCall } from "../../Prompt.ts"
import { normalise, type ProviderResponse, type Response } from "./provider.ts"

/**
 * One piece of a streamed answer (see `LanguageModel`'s `stream`):
 *
 * - `TextDelta`: the next piece of the reply's text;
 * - `ToolCallArgumentsStarted`: the model began writing a tool call whose
 *   id and name are known (`index` is its position in the reply); its
 *   arguments follow (was `ToolCallStarted`);
 * - `ToolCallArgumentsDelta`: the next piece of that call's raw arguments
 *   (the pieces joined are `arguments`; the first one may carry what arrived
 *   before the call's name did);
 * - `Finished`: the whole answer, exactly as `generate` would return it —
 *   always the last part, exactly once.
 *
 * @category models
 * @since 0.2.0
 */
export type StreamPart =
  | { readonly _tag: "TextDelta"; readonly delta: string }
  | { readonly _tag: "ToolCallArgumentsStarted"; readonly index: number; readonly id: string; readonly name: string }
  | { readonly _tag: "ToolCallArgumentsDelta"; readonly index: number; readonly id: string; readonly delta: string }
  | { readonly _tag: "Finished"; readonly response: Response }

/**
 * One fragment of a tool call in a streamed chunk: `index` says which call
 * it belongs to (fragments with the same index are one call); `id` and
 * `name` may come on any fragment (usually only the first); `arguments` is
 * the next piece of the raw arguments string.
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolCallFragment {
  readonly index: number
  readonly id?: string | null | undefined
  readonly name?: string | null | undefined
  readonly arguments?: string | null | undefined
}

/**
 * One chunk of a streamed answer as a provider yields it: a piece of text
 * and of the refusal, tool-call fragments, and, on the chunks that carry
 * them, the finish reason, the usage (usually only on the last chunk) and
 * the model. Missing or `null` fields carry nothing. The last finish reason,
 * usage and model seen win.
 *
 * @category models
 * @since 0.2.0
 */
export interface ProviderChunk {
  readonly text?: string | null | undefined
  readonly refusal?: string | null | undefined
  readonly toolCalls?: ReadonlyArray<ToolCallFragment> | null | undefined
  readonly finishReason?: string | null | undefined
  readonly usage?: ProviderResponse["usage"]
  readonly model?: string | null | undefined
}

interface Slot {
  id: string | undefined
  name: string | undefined
  arguments: string
  started: boolean
}

const isIndex = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0

const optionalString = (value: unknown): value is string | null | undefined =>
  value === undefined || value === null || typeof value === "string"

/**
 * Joins the chunks of one streamed answer: text and refusal pieces in order,
 * tool-call fragments by index (id and name from whichever fragment carries
 * them), the last finish reason, usage and model seen. `push` turns a chunk
 * into the parts it adds; `finish` checks the answer is whole and gives the
 * last parts and the `Finished` response.
 */
const joiner = (action: string) => {
  let text = ""
  let refusal = ""
  let finishReason: string | undefined
  let usage: ProviderResponse["usage"]
  let model: string | undefined
  let chunks = 0
  const slots = new Map<number, Slot>()
  const malformed = (field: string, detail: string) =>
    new ExecutionFailure({
      action,
      message: `${action}: the model stream sent a malformed chunk (chunk ${chunks}): ${field} ${detail}`
    })

  const started = (index: number, slot: Slot, parts: Array<StreamPart>) => {
    slot.started = true
    const id = slot.id ?? ""
    parts.push({ _tag: "ToolCallArgumentsStarted", index, id, name: slot.name as string })
    if (slot.arguments !== "") parts.push({ _tag: "ToolCallArgumentsDelta", index, id, delta: slot.arguments })
  }

  /** The parts a chunk adds to `parts`, or the failure of a malformed chunk. */
  const push = (chunk: ProviderChunk, parts: Array<StreamPart>): ExecutionFailure | undefined => {
    chunks += 1
    if (typeof chunk !== "object" || chunk === null) return malformed("the chunk", "is not an object")
    for (const field of ["text", "refusal", "finishReason", "model"] as const) {
      if (!optionalString(chunk[field])) return malformed(field, "is not a string")
    }
    const fragments = chunk.toolCalls ?? []
    if (!Array.isArray(fragments)) return malformed("toolCalls", "is not an array")
    if (typeof chunk.text === "string" && chunk.text !== "") {
      text += chunk.text
      parts.push({ _tag: "TextDelta", delta: chunk.text })
    }
    if (typeof chunk.refusal === "string") refusal += chunk.refusal
    for (let i = 0; i < fragments.length; i++) {
      const fragment: ToolCallFragment = fragments[i]
      const field = `toolCalls[${i}]`
      if (typeof fragment !== "object" || fragment === null) return malformed(field, "is not an object")
      if (!isIndex(fragment.index)) return malformed(`${field}.index`, "is not an integer >= 0")
      for (const key of ["id", "name", "arguments"] as const) {
        if (!optionalString(fragment[key])) return malformed(`${field}.${key}`, "is not a string")
      }
      let slot = slots.get(fragment.index)
      if (slot === undefined) {
        slot = { id: undefined, name: undefined, arguments: "", started: false }
        slots.set(fragment.index, slot)
      }
      if (typeof fragment.id === "string" && fragment.id !== "" && slot.id === undefined) slot.id = fragment.id
      if (typeof fragment.name === "string" && fragment.name !== "" && slot.name === undefined) {
        slot.name = fragment.name
      }
      const piece = fragment.arguments ?? ""
      slot.arguments += piece
      if (slot.started) {
        if (piece !== "") {
          parts.push({ _tag: "ToolCallArgumentsDelta", index: fragment.index, id: slot.id ?? "", delta: piece })
        }
      } else if (slot.id !== undefined && slot.name !== undefined) {
        started(fragment.index, slot, parts)
      }
    }
    if (typeof chunk.finishReason === "string" && chunk.finishReason !== "") finishReason = chunk.finishReason
    if (typeof chunk.model === "string") model = chunk.model
    if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage
    return undefined
  }

  /** The parts a batch of chunks adds (one list, so a batch costs one effect). */
  const pushAll = (
    batch: ReadonlyArray<ProviderChunk>
  ): Effect.Effect<readonly [ReadonlyArray<StreamPart>], ExecutionFailure> => {
    const parts: Array<StreamPart> = []
    for (const chunk of batch) {
      const failure = push(chunk, parts)
      if (failure !== undefined) return Effect.fail(failure)
    }
    return Effect.succeed([parts])
  }

  const finish = (): Effect.Effect<ReadonlyArray<StreamPart>, ActionError> => {
    if (finishReason === undefined) {
      return Effect.fail(
        new TransientFailure({
          action,
          message: `${action}: the model stream ended before the answer was finished (after ${chunks} chunks)`
        })
      )
    }
    const parts: Array<StreamPart> = []
    const indexes = [...slots.keys()].sort((a, b) => a - b)
    const toolCalls: Array<ToolCall> = []
    for (const index of indexes) {
      const slot = slots.get(index) as Slot
      if (slot.name === undefined) {
        return Effect.fail(
          new ExecutionFailure({
            action,
            message: `${action}: the model stream never completed the tool call at index ${index}: it has no name`
          })
        )
      }
      if (!slot.started) started(index, slot, parts)
      toolCalls.push({ id: slot.id ?? "", name: slot.name, arguments: slot.arguments })
    }
    const response = normalise(action, { text, toolCalls, finishReason, usage, model, refusal })
    if (response instanceof ExecutionFailure) return Effect.fail(response)
    parts.push({ _tag: "Finished", response })
    return Effect.succeed(parts)
  }

  return { pushAll, finish }
}

/**
 * The parts of a stream of chunks, ending with `Finished`. `onEnd` runs when the chunks have ended, before the
 * answer is checked. Failures other than an `ActionError` become EXECUTION; an interruption stays one.
 */
export const joined = <R>(
  action: string,
  chunks: Stream.Stream<ProviderChunk, unknown, R>,
  onEnd?: () => void
): Stream.Stream<StreamPart, ActionError, R> => {
  const join = joiner(action)
  return chunks.pipe(
    Stream.mapArrayEffect(join.pushAll),
    Stream.concat(
      Stream.fromEffect(
        Effect.suspend(() => {
          onEnd?.()
          return join.finish()
        })
      )
    ),
    Stream.flattenIterable,
    Stream.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Stream.failCause(cause as Cause.Cause<never>)
        : Stream.fail(streamFailure(action, Cause.squash(cause)))
    )
  )
}

/** A failure of a model stream as an action error: an `ActionError` as it is, anything else EXECUTION. */
export const streamFailure = (action: string, failure: unknown): ActionError =>
  isActionError(failure)
    ? failure
    : new ExecutionFailure({
        action,
        message: `${action}: model stream failed: ${failure instanceof Error ? failure.message : String(failure)}`,
        cause: failure
      })
