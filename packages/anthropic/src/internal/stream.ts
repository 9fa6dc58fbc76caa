/**
 * The events of a streamed Messages API reply read as provider chunks, and
 * the reply's blocks put together as they arrive: `message_start` gives the
 * model and the first usage; `content_block_start` opens a block (a
 * `tool_use` block starts its call: id and name, by the block's index; a
 * `redacted_thinking` block arrives whole); `content_block_delta` adds to it
 * (`text_delta` text, `thinking_delta` reasoning, `signature_delta` the
 * thinking block's signature, `input_json_delta` the next piece of the call's
 * arguments, `citations_delta` a citation); `content_block_stop` closes it;
 * `message_delta` gives the stop reason and the final usage (its fields
 * win over `message_start`'s); `ping` and unknown events carry nothing. A
 * tool call whose input never streamed a piece has the arguments `{}`. The
 * stop reason is held back until the reply's signed thinking blocks are
 * known, then sent with them on the last chunk. A field of the wrong type is
 * EXECUTION naming it.
 */
import { ActionError, type ModelResponse } from "@rolecraft/core"
import { malformed } from "./failure.ts"
import type { Block } from "./request.ts"
import * as Response from "./response.ts"

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** One block being read: its content so far, as the API would have sent it whole. */
interface Open {
  block: Record<string, unknown>
  arguments: string
  streamedArguments: boolean
}

/** What one streamed call has read so far. */
export interface State {
  /** Added to a block's index, so a call continued after `pause_turn` never reuses an index of the one before. */
  base: number
  /** How many blocks this call's `message_start` carried whole: the streamed blocks' indexes come after them. */
  carried: number
  readonly open: Map<number, Open>
  /** Every block of this call, closed, in order: what a continuation sends back. */
  readonly blocks: Array<Block>
  /** The signed thinking blocks of the whole reply (every call of a continued turn). */
  readonly thinking: Array<Block>
  usage: unknown
  model: string | undefined
  stopReason: unknown
  stopDetails: unknown
}

/** A fresh state for one streamed reply. */
export const make = (): State => ({
  base: 0,
  carried: 0,
  open: new Map(),
  blocks: [],
  thinking: [],
  usage: undefined,
  model: undefined,
  stopReason: undefined,
  stopDetails: undefined
})

/** Starts the next call of a continued turn: its blocks are new, its indexes after the last call's. */
export const next = (state: State): void => {
  state.base += state.blocks.length + state.open.size
  state.carried = 0
  state.open.clear()
  state.blocks.length = 0
  state.usage = undefined
  state.stopReason = undefined
  state.stopDetails = undefined
}

type Chunk = ModelResponse.ProviderChunk

const none: Chunk = {}

/** The chunk one event adds (possibly nothing), or the failure of a malformed event. */
export const readEvent = (action: string, state: State, event: unknown): Chunk | ActionError.ExecutionFailure => {
  const bad = (what: string) => malformed(action, `a stream event's ${what}`)
  if (!isRecord(event)) return bad("body is not an object")
  switch (event.type) {
    case "message_start": {
      const message = event.message
      if (!isRecord(message)) return bad("message is not an object")
      if (typeof message.model === "string") state.model = message.model
      state.usage = Response.mergeUsage(state.usage, message.usage)
      if (message.stop_reason !== undefined && message.stop_reason !== null) state.stopReason = message.stop_reason
      if (message.stop_details !== undefined && message.stop_details !== null) state.stopDetails = message.stop_details
      return carriedBlocks(
        action,
        state,
        message.content,
        typeof message.model === "string" ? message.model : undefined
      )
    }
    case "content_block_start": {
      const index = event.index
      const block = event.content_block
      if (typeof index !== "number" || !Number.isInteger(index) || index < 0) return bad("index is not an integer >= 0")
      if (!isRecord(block)) return bad("content_block is not an object")
      state.open.set(index, { block: { ...block }, arguments: "", streamedArguments: false })
      if (block.type === "tool_use") {
        if (typeof block.id !== "string" || typeof block.name !== "string") {
          return bad("content_block is a tool_use block without an id and a name")
        }
        return { toolCalls: [{ index: state.base + state.carried + index, id: block.id, name: block.name }] }
      }
      if (block.type === "text" && typeof block.text === "string" && block.text !== "") return { text: block.text }
      if (block.type === "thinking" && typeof block.thinking === "string" && block.thinking !== "") {
        return { reasoning: block.thinking, reasoningField: Response.reasoningField }
      }
      return none
    }
    case "content_block_delta": {
      const index = event.index
      const delta = event.delta
      if (typeof index !== "number") return bad("index is not a number")
      if (!isRecord(delta)) return bad("delta is not an object")
      const open = state.open.get(index)
      if (open === undefined) return bad(`delta is for block ${index}, which was never started`)
      const { block } = open
      switch (delta.type) {
        case "text_delta":
          if (typeof delta.text !== "string") return bad("delta.text is not a string")
          block.text = `${typeof block.text === "string" ? block.text : ""}${delta.text}`
          return { text: delta.text }
        case "thinking_delta":
          if (typeof delta.thinking !== "string") return bad("delta.thinking is not a string")
          block.thinking = `${typeof block.thinking === "string" ? block.thinking : ""}${delta.thinking}`
          return { reasoning: delta.thinking, reasoningField: Response.reasoningField }
        case "signature_delta":
          if (typeof delta.signature !== "string") return bad("delta.signature is not a string")
          block.signature = `${typeof block.signature === "string" ? block.signature : ""}${delta.signature}`
          return none
        case "input_json_delta": {
          if (typeof delta.partial_json !== "string") return bad("delta.partial_json is not a string")
          open.arguments += delta.partial_json
          if (delta.partial_json !== "") open.streamedArguments = true
          return block.type === "tool_use" && delta.partial_json !== ""
            ? { toolCalls: [{ index: state.base + state.carried + index, arguments: delta.partial_json }] }
            : none
        }
        case "citations_delta": {
          const citations = Response.citationsOf([delta.citation])
          const list = Array.isArray(block.citations) ? block.citations : []
          block.citations = [...list, delta.citation]
          return citations.length === 0 ? none : { citations }
        }
        default:
          return none
      }
    }
    case "content_block_stop": {
      const index = event.index
      if (typeof index !== "number") return bad("index is not a number")
      const open = state.open.get(index)
      if (open === undefined) return none
      state.open.delete(index)
      const { block } = open
      let emitted: Chunk = none
      if (block.type === "tool_use" || block.type === "server_tool_use") {
        const input = open.arguments.trim() === "" ? (block.input ?? {}) : parseInput(open.arguments)
        block.input = input
        // A call whose input never streamed has the arguments its start block carried (usually `{}`).
        if (block.type === "tool_use" && !open.streamedArguments) {
          emitted = { toolCalls: [{ index: state.base + state.carried + index, arguments: JSON.stringify(input) }] }
        }
      }
      state.blocks.push(block)
      if (Response.isThinkingBlock(block)) state.thinking.push(block)
      return emitted
    }
    case "message_delta": {
      const delta = event.delta
      if (delta !== undefined && !isRecord(delta)) return bad("delta is not an object")
      if (isRecord(delta)) {
        if (delta.stop_reason !== undefined && delta.stop_reason !== null) state.stopReason = delta.stop_reason
        if (delta.stop_details !== undefined && delta.stop_details !== null) state.stopDetails = delta.stop_details
      }
      state.usage = Response.mergeUsage(state.usage, event.usage)
      return none
    }
    default:
      return none
  }
}

/**
 * The chunk of the blocks a `message_start` carries whole (the API sends a turn's calls so when a server tool
 * such as code execution made them): each closed at once, its text, thinking and calls given in one chunk.
 */
const carriedBlocks = (
  action: string,
  state: State,
  content: unknown,
  model: string | undefined
): Chunk | ActionError.ExecutionFailure => {
  const blocks = Array.isArray(content) ? content : []
  let text = ""
  let reasoning = ""
  const toolCalls: Array<ModelResponse.ToolCallFragment> = []
  for (let i = 0; i < blocks.length; i++) {
    const block: unknown = blocks[i]
    if (!isRecord(block)) return malformed(action, `a stream event's message.content[${i}] is not an object`)
    state.blocks.push(block)
    if (Response.isThinkingBlock(block)) state.thinking.push(block)
    if (block.type === "text" && typeof block.text === "string") text += block.text
    if (block.type === "thinking" && typeof block.thinking === "string") reasoning += block.thinking
    if (block.type === "tool_use" && typeof block.id === "string" && typeof block.name === "string") {
      toolCalls.push({
        index: state.base + i,
        id: block.id,
        name: block.name,
        arguments: JSON.stringify(block.input ?? {})
      })
    }
  }
  state.carried = blocks.length
  return {
    ...(model === undefined ? {} : { model }),
    ...(text === "" ? {} : { text }),
    ...(reasoning === "" ? {} : { reasoning, reasoningField: Response.reasoningField }),
    ...(toolCalls.length === 0 ? {} : { toolCalls })
  }
}

/** A tool call's streamed input, parsed; a piece that is not JSON is kept as its text, for the agent to refuse. */
const parseInput = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** The last chunk of a reply: its stop reason, its usage (summed over continued calls) and its thinking blocks. */
export const finalChunk = (state: State, usage: ModelResponse.ProviderUsage | undefined): Chunk => {
  const refusal = Response.refusalOf(state.stopReason, state.stopDetails)
  const providerData = Response.providerDataOf(state.thinking)
  return {
    finishReason: Response.finishReasonOf(state.stopReason) ?? null,
    ...(usage === undefined ? {} : { usage }),
    ...(refusal === undefined ? {} : { refusal }),
    ...(providerData === undefined ? {} : { providerData })
  }
}

/** {@link readEvent}, throwing its failure (inside the provider's async iterable, where throwing is how it fails). */
export const readEventOrThrow = (action: string, state: State, event: unknown): Chunk => {
  const read = readEvent(action, state, event)
  if (read instanceof ActionError.ExecutionFailure) throw read
  return read
}
