/**
 * What a server sends that no request is waiting for, watched for the life
 * of a connection: a stdio server's non-JSON lines on stdout (banners) are
 * logged and skipped; a late answer to a request already given up on is
 * dropped; a reply under an id no request has, a broken frame, or (over
 * HTTP) a 2xx payload that is not JSON-RPC fails every pending request at
 * once with `Protocol` and a snippet of the payload, instead of leaving them
 * to time out. It also marks the connection closed when its transport
 * closes, and forgets the cached tool list on `tools/list_changed`.
 */
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Core from "@rolecraft/core/McpClient"
import * as Result from "effect/Result"
import { isParseError, isPayloadError, looksLikeFrame, parseProblem, truncate } from "./failure.ts"
import { hide } from "./redact.ts"
import type { Session } from "./session.ts"

/** Fails every pending request at once: the server sent something no request can wait past. */
export const failPending = (session: Session, problem: string, cause?: unknown): void => {
  const snippet = session.opened.received()
  const failure = new Core.McpClientError({
    reason: "Protocol",
    sent: true,
    message: hide(`the server's reply is not a valid JSON-RPC response (${problem})`, session.secrets),
    ...(snippet === undefined ? {} : { snippet }),
    ...(cause === undefined ? {} : { cause })
  })
  // Resuming a waiter runs its fiber on: it may register the next call before this loop ends.
  const failing = [...session.pending]
  session.pending.clear()
  for (const fail of failing) fail(failure)
}

// The id a "unknown message ID" error names, `"?"` when it names none that parses.
const unknownId = (error: Error): number | string | undefined => {
  const match = /unknown message ID: (.*)$/s.exec(error.message)
  if (match === null) return undefined
  const id = Result.try(() => (JSON.parse(match[1] ?? "") as { readonly id?: unknown }).id)
  const value = Result.isSuccess(id) ? id.success : undefined
  return typeof value === "number" || typeof value === "string" ? value : "?"
}

/** Starts watching a connection (see the module doc); before it connects. */
export const watch = (session: Session): void => {
  const { client, opened, state, pending, who, log } = session
  // The ids of the requests sent so far (the SDK numbers them 0, 1, 2, …): a reply under a
  // smaller id is a late answer to a request given up on, not a broken server.
  let lastRequestId = -1
  const send = opened.transport.send.bind(opened.transport)
  opened.transport.send = (message, sendOptions) => {
    if ("method" in message && "id" in message && typeof message.id === "number") {
      lastRequestId = Math.max(lastRequestId, message.id)
    }
    return send(message, sendOptions)
  }

  opened.onNoise?.((line) => {
    if (looksLikeFrame(line) && pending.size > 0) {
      failPending(session, `a broken frame: ${truncate(line, 120)}`)
      return
    }
    log("Warn", `${who} wrote a line on stdout that is not JSON-RPC; skipped: ${truncate(line, 200)}`)
  })
  client.onclose = () => {
    state.open = false
  }
  client.onerror = (error) => {
    const id = unknownId(error)
    if (id !== undefined) {
      if (typeof id === "number" && id <= lastRequestId) {
        log("Debug", `${who} answered request ${id} after it was given up on; the answer is dropped`)
      } else if (pending.size > 0) {
        failPending(session, `a reply under the id ${JSON.stringify(id)}, which no request has`, error)
      } else {
        log("Warn", `${who} sent a reply under the id ${JSON.stringify(id)}, which no request has; skipped`)
      }
      return
    }
    if (opened.kind === "stdio" && isParseError(error)) {
      log("Warn", `${who} wrote a line on stdout that is not JSON-RPC; skipped: ${truncate(error.message, 200)}`)
      return
    }
    if (opened.kind === "http" && isPayloadError(error) && pending.size > 0) {
      failPending(session, parseProblem(error), error)
      return
    }
    log("Debug", `${who}: ${error.message}`)
  }
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    state.generation++
    state.tools = undefined
  })
}
