/**
 * How an MCP client's failure reads and which category it is: the exit status
 * and stderr tail of a server that went away, and the mapping of each
 * failure reason to one of the nine categories (a failure after the request
 * was sent is retryable only for an idempotent action).
 */
import * as Duration from "effect/Duration"
import { type ActionError, ExecutionFailure, Timeout, TransientFailure, ValidationError } from "../../../ActionError.ts"
import type { McpClientError } from "../../../McpClient.ts"

const tail = (text: string) => text.trim().split("\n").slice(-20).join("\n")

/** How a failure of the server or its transport reads: exit status and the tail of stderr. */
export const diagnostics = (error: McpClientError): string => {
  const exit =
    error.exitCode !== undefined
      ? ` (exit code ${error.exitCode})`
      : error.signal !== undefined
        ? ` (killed by ${error.signal})`
        : ""
  const stderr = error.stderr === undefined || error.stderr.trim() === "" ? "" : `; stderr: ${tail(error.stderr)}`
  const snippet = error.snippet === undefined ? "" : `; received: ${error.snippet}`
  return `${error.message}${exit}${snippet}${stderr}`
}

/**
 * Maps a client failure to its category. `label` is `action` or
 * `action/tool`; `idempotent` allows retrying a failure whose outcome is
 * unknown (the request may have run on the server).
 */
export const toActionError = (
  name: string,
  label: string,
  error: McpClientError,
  options: { readonly idempotent: boolean; readonly timeout: Duration.Duration }
): ActionError => {
  const unknownOutcome = (status?: number) =>
    new TransientFailure({
      action: name,
      message: `${label}: ${diagnostics(error)}`,
      outcomeUnknown: error.sent,
      retryable: !error.sent || options.idempotent,
      ...(status === undefined ? {} : { status }),
      cause: error
    })
  switch (error.reason) {
    case "Connect":
    case "Closed":
    case "Protocol":
    case "SessionExpired":
      return unknownOutcome()
    case "Timeout":
      // The request was sent: whether the tool ran is unknown, so only an idempotent action may repeat it.
      return new Timeout({
        action: name,
        after: options.timeout,
        retryable: options.idempotent,
        message: `${label}: the MCP request timed out after ${Duration.format(options.timeout)} and was cancelled`,
        cause: error
      })
    case "Http": {
      const status = error.status ?? 0
      if (status === 429) {
        return new TransientFailure({ action: name, message: `${label}: ${error.message}`, status, cause: error })
      }
      if (status === 408 || status >= 500) return unknownOutcome(status)
      return new ExecutionFailure({
        action: name,
        message: `${label}: ${error.message}`,
        excerpt: error.message.slice(0, 1_000),
        ...(status === 0 ? {} : { status }),
        cause: error
      })
    }
    case "InvalidParams":
      return new ValidationError({
        action: name,
        message: `${label}: the MCP server refused the arguments: ${error.message}`,
        issues: [{ path: "arguments", message: error.message }],
        cause: error
      })
    case "MethodNotFound":
    case "Rpc":
      return new ExecutionFailure({
        action: name,
        message: `${label}: the MCP server answered with an error: ${error.message}`,
        excerpt: error.message.slice(0, 1_000),
        cause: error
      })
  }
}
