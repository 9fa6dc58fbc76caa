/**
 * What a server asks of the client during a connection: elicitation
 * (`elicitation/create`) goes to the user's `McpElicitation` service, or is
 * declined when there is none (the client still declares the capability,
 * so a server learns that its user said no instead of meeting -32601);
 * on `accept` the SDK fills in the form's defaults for the fields left out.
 * A server's log messages (`notifications/message`) are told to the
 * connection's caller (the agent publishes them as events), their data as
 * text of at most 2,000 characters with the connection's secrets hidden.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  ElicitRequestSchema,
  type ElicitResult,
  LoggingMessageNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import type * as McpElicitation from "../McpElicitation.ts"
import { truncate } from "./failure.ts"
import { hide } from "./redact.ts"
import type { Session } from "./session.ts"

/** The capabilities the client declares for what it answers. */
export const capabilities = { elicitation: { form: { applyDefaults: true }, url: {} } } as const

/** Answers `elicitation/create` on `client` for the server `name` with `service` (declines without one). */
export const answer = (
  client: Client,
  name: string,
  service: McpElicitation.McpElicitation["Service"] | undefined,
  log: (message: string) => void
): void => {
  client.setRequestHandler(ElicitRequestSchema, async (request): Promise<ElicitResult> => {
    const params = request.params
    if (service === undefined) {
      log(`declined an elicitation request of MCP server ${name}: no McpElicitation service is provided`)
      return { action: "decline" }
    }
    const response = await Effect.runPromise(
      service.elicit({
        server: name,
        message: params.message,
        mode: params.mode === "url" ? "url" : "form",
        ...("requestedSchema" in params && params.requestedSchema !== undefined
          ? { requestedSchema: params.requestedSchema as Record<string, unknown> }
          : {}),
        ...("url" in params && typeof params.url === "string" ? { url: params.url } : {})
      })
    )
    return response.action === "accept"
      ? { action: "accept", content: { ...(response.content as ElicitResult["content"]) } }
      : { action: response.action }
  })
}

/** The most characters of a log message's data told to the caller. */
const maxLogCharacters = 2_000

/** Tells the connection's caller the server's log messages. */
export const listen = (session: Session): void => {
  session.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    const { level, logger, data } = notification.params
    const text = typeof data === "string" ? data : (JSON.stringify(data) ?? String(data))
    session.notify({
      _tag: "Log",
      level,
      ...(logger === undefined ? {} : { logger }),
      data: truncate(hide(text, session.secrets), maxLogCharacters)
    })
  })
}
