/**
 * A Messages API reply as the events the API streams it with: `message_start`
 * (the message without content, its input usage), then per content block a
 * `content_block_start` (a text block empty, a thinking block empty with an
 * empty signature, a tool_use block with `input: {}`, any other block whole),
 * its deltas (`text_delta` one word at a time, `thinking_delta` one word at a
 * time then one `signature_delta`, `input_json_delta` in up to three pieces)
 * and `content_block_stop`; then `message_delta` (stop reason, stop details
 * and the usage) and `message_stop`. Written as server-sent events with the
 * `event:` line the SDK reads.
 */
import type * as Http from "node:http"
import type { Timers } from "./timers.ts"

type Json = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** `text` in pieces of one word (with the space before it), none for "". */
const words = (text: string): ReadonlyArray<string> => text.match(/\s*\S+\s*/g) ?? (text === "" ? [] : [text])

/** `text` in up to three pieces. */
const thirds = (text: string): ReadonlyArray<string> => {
  if (text.length < 3) return text === "" ? [] : [text]
  const a = Math.floor(text.length / 3)
  const b = Math.floor((2 * text.length) / 3)
  return [text.slice(0, a), text.slice(a, b), text.slice(b)]
}

/** The events of a whole message (see the module's header). */
export const eventsOf = (message: Json): ReadonlyArray<Json> => {
  const content = Array.isArray(message.content) ? message.content : []
  const usage = isRecord(message.usage) ? message.usage : {}
  const { content: _content, stop_reason, stop_details, stop_sequence, ...rest } = message
  const events: Array<Json> = [
    {
      type: "message_start",
      message: { ...rest, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } }
    }
  ]
  content.forEach((block: unknown, index: number) => {
    if (!isRecord(block)) return
    switch (block.type) {
      case "text": {
        const { text, ...others } = block
        events.push({ type: "content_block_start", index, content_block: { ...others, text: "" } })
        for (const piece of words(typeof text === "string" ? text : "")) {
          events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } })
        }
        break
      }
      case "thinking": {
        events.push({
          type: "content_block_start",
          index,
          content_block: { type: "thinking", thinking: "", signature: "" }
        })
        for (const piece of words(typeof block.thinking === "string" ? block.thinking : "")) {
          events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: piece } })
        }
        events.push({
          type: "content_block_delta",
          index,
          delta: { type: "signature_delta", signature: typeof block.signature === "string" ? block.signature : "" }
        })
        break
      }
      case "tool_use":
      case "server_tool_use": {
        events.push({ type: "content_block_start", index, content_block: { ...block, input: {} } })
        const input = JSON.stringify(block.input ?? {})
        for (const piece of input === "{}" ? [] : thirds(input)) {
          events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } })
        }
        break
      }
      default:
        events.push({ type: "content_block_start", index, content_block: block })
    }
    events.push({ type: "content_block_stop", index })
  })
  events.push({
    type: "message_delta",
    delta: {
      stop_reason: stop_reason ?? "end_turn",
      stop_sequence: stop_sequence ?? null,
      ...(stop_details === undefined ? {} : { stop_details })
    },
    usage
  })
  events.push({ type: "message_stop" })
  return events
}

/**
 * How a stream ends: `"end"` ends the response; `"stall"` sends nothing more and keeps the connection open;
 * `"cut"` destroys the socket without ending the response.
 */
export type Ending = "end" | "stall" | "cut"

/** One event as a server-sent event: an object under its `type` as the `event:` line, a string as its data as is. */
export const frame = (item: unknown): string => {
  if (typeof item === "string") return `event: message\ndata: ${item}\n\n`
  const type = isRecord(item) && typeof item.type === "string" ? item.type : "message"
  return `event: ${type}\ndata: ${JSON.stringify(item)}\n\n`
}

/** Streams `list` as server-sent events, `chunkDelay` milliseconds apart (0: all at once), then ends as `ending` says. */
export const stream = (
  response: Http.ServerResponse,
  list: ReadonlyArray<unknown>,
  ending: Ending,
  options: { readonly chunkDelay: number; readonly timers: Timers; readonly cutOff: WeakSet<Http.ServerResponse> }
): void => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  const end = () => {
    if (response.destroyed) return
    if (ending === "end") response.end()
    else if (ending === "cut") {
      options.cutOff.add(response)
      response.write("", () => response.socket?.destroy())
    } else response.flushHeaders()
  }
  if (options.chunkDelay === 0) {
    for (const item of list) response.write(frame(item))
    end()
    return
  }
  const write = (i: number) => {
    if (response.destroyed) return
    if (i >= list.length) {
      end()
      return
    }
    response.write(frame(list[i]))
    options.timers.later(response, options.chunkDelay, () => write(i + 1))
  }
  write(0)
}
