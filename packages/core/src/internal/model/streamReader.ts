/**
 * The stream reader: the chunks a streaming provider yields become the
 * parts callers see and, at the end, the whole answer. A chunk may carry a
 * piece of text, of the refusal and of the reasoning, tool-call fragments,
 * citations, and the finish reason, usage and model; the reader gives text
 * and reasoning deltas as they come, starts a tool call as soon as its id
 * and name are known, passes on its argument pieces, and ends with a
 * `Finished` part holding the response, normalised as a non-streamed answer
 * is.
 *
 * Tool-call fragments are matched the ways real servers send them: by
 * `index` (a fragment carrying a different non-empty id than the call at its
 * index starts a new call), by id when there is no index, and to the last
 * call when a fragment has neither; an empty id or name never replaces a
 * known one. Calls are answered in the order they began.
 *
 * It refuses a malformed chunk, a tool call whose name never arrived, and a
 * reply larger than its cap (`maxReplyCharacters`: text, reasoning, refusal
 * and arguments together, counted as they arrive) — each EXECUTION — and a
 * stream that ends without a finish reason (TRANSIENT: cut off).
 * The types are `ModelResponse`'s.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type ActionError, ExecutionFailure, isActionError, TransientFailure } from "../../ActionError.ts"
import type { ToolCall } from "../../Prompt.ts"
import type {
  Citation,
  ProviderChunk,
  ProviderData,
  ProviderResponse,
  StreamPart,
  ToolCallFragment
} from "../../ModelResponse.ts"
import { citationOf } from "./citation.ts"
import { capped, defaultMaxReplyCharacters, normalise, tooLarge } from "./provider.ts"

/** One tool call being read: what its fragments said so far. */
interface Slot {
  /** Its position in the reply: the order in which the calls began. */
  readonly position: number
  id: string | undefined
  name: string | undefined
  arguments: string
  started: boolean
}

const isIndex = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0

const optionalString = (value: unknown): value is string | null | undefined =>
  value === undefined || value === null || typeof value === "string"

const nonEmpty = (value: string | null | undefined): value is string => typeof value === "string" && value !== ""

/**
 * Options of a reader: the action that names its errors, the cap on the reply's size, the request's
 * `maxTokens` (a reply that used exactly that many is cut: `"length"`), and the clock (milliseconds) whose
 * time of the last batch the idle watch reads.
 */
export interface ReaderOptions {
  readonly action: string
  readonly maxReplyCharacters?: number | undefined
  readonly maxTokens?: number | undefined
  readonly now?: (() => number) | undefined
}

/** What one reader has read so far: the answer's pieces, its calls by index and by id, and its counts. */
interface State {
  readonly action: string
  readonly cap: number
  readonly maxTokens: number | undefined
  readonly now: (() => number) | undefined
  text: string
  refusal: string
  reasoning: string
  reasoningField: string | undefined
  finishReason: string | undefined
  usage: ProviderResponse["usage"]
  model: string | undefined
  providerData: ProviderData | undefined
  chunks: number
  size: number
  lastBatchAt: number
  expired: ActionError | undefined
  readonly slots: Array<Slot>
  readonly byIndex: Map<number, Slot>
  readonly byId: Map<string, Slot>
  citations: Array<Citation> | undefined
  citationKeys: Set<string> | undefined
}

const malformed = (state: State, field: string, detail: string) =>
  new ExecutionFailure({
    action: state.action,
    message: `${state.action}: the model stream sent a malformed chunk (chunk ${state.chunks}): ${field} ${detail}`
  })

/** Counts `length` more characters of the reply: the failure naming the cap once it is passed. */
const grow = (state: State, length: number): ExecutionFailure | undefined => {
  state.size += length
  return state.size > state.cap ? tooLarge(state.action, state.cap) : undefined
}

const start = (slot: Slot, parts: Array<StreamPart>) => {
  slot.started = true
  const id = slot.id ?? ""
  const index = slot.position
  parts.push({ _tag: "ToolCallArgumentsStarted", index, id, name: slot.name as string })
  if (slot.arguments !== "") parts.push({ _tag: "ToolCallArgumentsDelta", index, id, delta: slot.arguments })
}

const open = (state: State, index: number | undefined, id: string | undefined): Slot => {
  const slot: Slot = { position: state.slots.length, id, name: undefined, arguments: "", started: false }
  state.slots.push(slot)
  if (index !== undefined) state.byIndex.set(index, slot)
  if (id !== undefined) state.byId.set(id, slot)
  return slot
}

/** The call a fragment belongs to (see the module's header), opened when it begins one. */
const slotOf = (state: State, index: number | undefined, id: string | undefined): Slot => {
  if (index !== undefined) {
    const slot = state.byIndex.get(index)
    if (slot === undefined) return open(state, index, id)
    if (id === undefined || slot.id === id) return slot
    if (slot.id !== undefined) return open(state, index, id)
    slot.id = id
    state.byId.set(id, slot)
    return slot
  }
  if (id !== undefined) return state.byId.get(id) ?? open(state, undefined, id)
  return state.slots[state.slots.length - 1] ?? open(state, undefined, undefined)
}

/** Adds the citations of a chunk not seen before (servers repeat the whole list on every chunk). */
const cite = (state: State, raw: ReadonlyArray<Citation | string>) => {
  for (const entry of raw) {
    const citation = citationOf(entry)
    if (citation === undefined) continue
    const { url, title, startIndex, endIndex } = citation
    const key = `${url ?? ""}\u0000${title ?? ""}\u0000${startIndex ?? ""}\u0000${endIndex ?? ""}`
    state.citationKeys ??= new Set()
    if (state.citationKeys.has(key)) continue
    state.citationKeys.add(key)
    state.citations ??= []
    state.citations.push(citation)
  }
}

/** The parts a chunk's tool-call fragments add to `parts`, or the failure of a malformed fragment. */
const fragments = (
  state: State,
  list: ReadonlyArray<ToolCallFragment>,
  parts: Array<StreamPart>
): ExecutionFailure | undefined => {
  for (let i = 0; i < list.length; i++) {
    const fragment = list[i] as ToolCallFragment
    const field = `toolCalls[${i}]`
    if (typeof fragment !== "object" || fragment === null) return malformed(state, field, "is not an object")
    const index = fragment.index
    if (index !== undefined && index !== null && !isIndex(index)) {
      return malformed(state, `${field}.index`, "is not an integer >= 0")
    }
    if (!optionalString(fragment.id)) return malformed(state, `${field}.id`, "is not a string")
    if (!optionalString(fragment.name)) return malformed(state, `${field}.name`, "is not a string")
    if (!optionalString(fragment.arguments)) return malformed(state, `${field}.arguments`, "is not a string")
    const slot = slotOf(state, isIndex(index) ? index : undefined, nonEmpty(fragment.id) ? fragment.id : undefined)
    if (nonEmpty(fragment.name) && slot.name === undefined) slot.name = fragment.name
    const piece = fragment.arguments ?? ""
    if (piece !== "") {
      const past = grow(state, piece.length)
      if (past !== undefined) return past
      slot.arguments += piece
    }
    if (slot.started) {
      if (piece !== "") {
        parts.push({ _tag: "ToolCallArgumentsDelta", index: slot.position, id: slot.id ?? "", delta: piece })
      }
    } else if (slot.id !== undefined && slot.name !== undefined) {
      start(slot, parts)
    }
  }
  return undefined
}

/** The parts a chunk adds to `parts`, or the failure of a malformed chunk or of a reply past the cap. */
const push = (state: State, chunk: ProviderChunk, parts: Array<StreamPart>): ExecutionFailure | undefined => {
  state.chunks += 1
  if (typeof chunk !== "object" || chunk === null) return malformed(state, "the chunk", "is not an object")
  const { text, refusal, reasoning } = chunk
  if (!optionalString(text)) return malformed(state, "text", "is not a string")
  if (!optionalString(refusal)) return malformed(state, "refusal", "is not a string")
  if (!optionalString(reasoning)) return malformed(state, "reasoning", "is not a string")
  if (!optionalString(chunk.finishReason)) return malformed(state, "finishReason", "is not a string")
  if (!optionalString(chunk.model)) return malformed(state, "model", "is not a string")
  if (nonEmpty(reasoning)) {
    const past = grow(state, reasoning.length)
    if (past !== undefined) return past
    state.reasoning += reasoning
    if (state.reasoningField === undefined && nonEmpty(chunk.reasoningField))
      state.reasoningField = chunk.reasoningField
    parts.push({ _tag: "ReasoningDelta", delta: reasoning })
  }
  if (nonEmpty(text)) {
    const past = grow(state, text.length)
    if (past !== undefined) return past
    state.text += text
    parts.push({ _tag: "TextDelta", delta: text })
  }
  if (nonEmpty(refusal)) {
    const past = grow(state, refusal.length)
    if (past !== undefined) return past
    state.refusal += refusal
  }
  const calls = chunk.toolCalls
  if (calls !== undefined && calls !== null) {
    if (!Array.isArray(calls)) return malformed(state, "toolCalls", "is not an array")
    const failure = fragments(state, calls, parts)
    if (failure !== undefined) return failure
  }
  const cited = chunk.citations
  if (cited !== undefined && cited !== null) {
    if (!Array.isArray(cited)) return malformed(state, "citations", "is not an array")
    cite(state, cited)
  }
  if (nonEmpty(chunk.finishReason)) state.finishReason = chunk.finishReason
  if (typeof chunk.model === "string") state.model = chunk.model
  if (chunk.usage !== undefined && chunk.usage !== null) state.usage = chunk.usage
  if (chunk.providerData !== undefined && chunk.providerData !== null) state.providerData = chunk.providerData
  return undefined
}

/** The parts a batch of chunks adds (one list, so a batch costs one effect). */
const pushAll = (
  state: State,
  batch: ReadonlyArray<ProviderChunk>
): Effect.Effect<readonly [ReadonlyArray<StreamPart>], ActionError> => {
  if (state.expired !== undefined) return Effect.fail(state.expired)
  if (state.now !== undefined) state.lastBatchAt = state.now()
  const parts: Array<StreamPart> = []
  for (const chunk of batch) {
    const failure = push(state, chunk, parts)
    if (failure !== undefined) return Effect.fail(failure)
  }
  return Effect.succeed([parts])
}

/** The last parts of a whole answer and its `Finished` response, or why it is not whole. */
const finish = (state: State): Effect.Effect<ReadonlyArray<StreamPart>, ActionError> => {
  const { action } = state
  if (state.expired !== undefined) return Effect.fail(state.expired)
  if (state.finishReason === undefined) {
    return Effect.fail(
      new TransientFailure({
        action,
        message: `${action}: the model stream ended before the answer was finished (after ${state.chunks} chunks)`
      })
    )
  }
  const parts: Array<StreamPart> = []
  const toolCalls: Array<ToolCall> = []
  for (const slot of state.slots) {
    if (slot.name === undefined) {
      return Effect.fail(
        new ExecutionFailure({
          action,
          message: `${action}: the model stream never completed the tool call at index ${slot.position}: it has no name`
        })
      )
    }
    if (!slot.started) start(slot, parts)
    toolCalls.push({ id: slot.id ?? "", name: slot.name, arguments: slot.arguments })
  }
  const { text, finishReason, usage, model, refusal, reasoning, reasoningField, citations, providerData } = state
  const response = normalise(
    action,
    { text, toolCalls, finishReason, usage, model, refusal, reasoning, reasoningField, citations, providerData },
    state.cap
  )
  if (response instanceof ExecutionFailure) return Effect.fail(response)
  parts.push({ _tag: "Finished", response: capped(response, state.maxTokens) })
  return Effect.succeed(parts)
}

/**
 * Reads the chunks of one streamed answer. `pushAll` turns a batch of chunks into the parts it adds;
 * `finish` checks the answer is whole and gives the last parts and the `Finished` response; `chunks`
 * counts the chunks read and `lastBatchAt` is when the last batch came (by `now`; `-1` before any);
 * `expire` cuts the read off with a failure (a time limit passed), which `expired` then holds.
 */
export const reader = (options: ReaderOptions) => {
  const state: State = {
    action: options.action,
    cap: options.maxReplyCharacters ?? defaultMaxReplyCharacters,
    maxTokens: options.maxTokens,
    now: options.now,
    text: "",
    refusal: "",
    reasoning: "",
    reasoningField: undefined,
    finishReason: undefined,
    usage: undefined,
    model: undefined,
    providerData: undefined,
    chunks: 0,
    size: 0,
    lastBatchAt: -1,
    expired: undefined,
    slots: [],
    byIndex: new Map(),
    byId: new Map(),
    citations: undefined,
    citationKeys: undefined
  }
  return {
    pushAll: (batch: ReadonlyArray<ProviderChunk>) => pushAll(state, batch),
    finish: () => finish(state),
    get chunks() {
      return state.chunks
    },
    get lastBatchAt() {
      return state.lastBatchAt
    },
    get expired() {
      return state.expired
    },
    expire: (error: ActionError) => {
      state.expired ??= error
    }
  }
}

/** A reader of one streamed answer (see {@link reader}). */
export type Reader = ReturnType<typeof reader>

/**
 * The parts of a stream of chunks, read by `read`, ending with `Finished`. `onEnd` runs when the chunks have
 * ended, before the answer is checked. Failures other than an `ActionError` become EXECUTION; an interruption
 * stays one.
 */
export const joined = <R>(
  read: Reader,
  action: string,
  chunks: Stream.Stream<ProviderChunk, unknown, R>,
  onEnd?: () => void
): Stream.Stream<StreamPart, ActionError, R> =>
  chunks.pipe(
    Stream.mapArrayEffect(read.pushAll),
    Stream.concat(
      Stream.fromEffect(
        Effect.suspend(() => {
          onEnd?.()
          return read.finish()
        })
      )
    ),
    Stream.flattenIterable,
    Stream.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Stream.failCause(cause as Cause.Cause<never>)
        : // Cut off by a time limit, the provider's stream may fail as its request is aborted: the limit is why.
          Stream.fail(read.expired ?? streamFailure(action, Cause.squash(cause)))
    )
  )

/** A failure of a model stream as an action error: an `ActionError` as it is, anything else EXECUTION. */
export const streamFailure = (action: string, failure: unknown): ActionError =>
  isActionError(failure)
    ? failure
    : new ExecutionFailure({
        action,
        message: `${action}: model stream failed: ${failure instanceof Error ? failure.message : String(failure)}`,
        cause: failure
      })
