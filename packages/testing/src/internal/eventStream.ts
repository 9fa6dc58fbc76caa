/**
 * Writing a scripted server's answers: a whole JSON body, or a stream of
 * server-sent events (`data: …` per item) the way the OpenAI API streams,
 * ended as the script says — `[DONE]`, a stall, or a socket cut mid-stream —
 * with an optional real-time delay between events.
 */
import type * as Http from "node:http"
import type { Timers } from "./timers.ts"

/**
 * How a stream ends: `"done"` sends `data: [DONE]` and ends the response;
 * `"stall"` sends nothing more and keeps the connection open until the
 * client closes it; `"cut"` destroys the socket without ending the response.
 *
 * @category models
 * @since 0.1.0
 */
export type Ending = "done" | "stall" | "cut"

/** Sends a whole answer: `status`, `body` as given, content type JSON unless `headers` say otherwise. */
export const send = (
  response: Http.ServerResponse,
  status: number,
  body: string,
  headers: Readonly<Record<string, string>> = {}
): void => {
  response.writeHead(status, { "content-type": "application/json", ...headers })
  response.end(body)
}

/**
 * Streams `list` as server-sent events (an object as its JSON, a string as is), `chunkDelay` milliseconds
 * apart (0: all at once), then ends as `ending` says; a cut response is added to `cutOff`.
 */
export const stream = (
  response: Http.ServerResponse,
  list: ReadonlyArray<unknown>,
  ending: Ending,
  options: {
    readonly chunkDelay: number
    readonly timers: Timers
    readonly cutOff: WeakSet<Http.ServerResponse>
  }
): void => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  const event = (item: unknown) => `data: ${typeof item === "string" ? item : JSON.stringify(item)}\n\n`
  const end = () => {
    if (response.destroyed) return
    if (ending === "done") response.end("data: [DONE]\n\n")
    else if (ending === "cut") {
      options.cutOff.add(response)
      // Flush what was written, then close the socket without ending the response.
      response.write("", () => response.socket?.destroy())
    } else response.flushHeaders()
  }
  if (options.chunkDelay === 0) {
    for (const item of list) response.write(event(item))
    end()
    return
  }
  const write = (i: number) => {
    if (response.destroyed) return
    const item = list[i]
    if (i >= list.length) {
      end()
      return
    }
    response.write(event(item))
    options.timers.later(response, options.chunkDelay, () => write(i + 1))
  }
  write(0)
}
