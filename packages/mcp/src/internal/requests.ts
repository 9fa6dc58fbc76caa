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
  CreateMessageRequestSchema,
  type CreateMessageResult,
  ElicitRequestSchema,
  type ElicitResult,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError
} from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import type * as McpElicitation from "../McpElicitation.ts"
import type * as McpSampling from "../McpSampling.ts"
import { truncate } from "./failure.ts"
import { hide } from "./redact.ts"
import type { Session } from "./session.ts"

/** What the client answers besides elicitation: sampling (with a service) and roots (when configured). */
export interface Answers {
  readonly sampling?: McpSampling.McpSampling["Service"] | undefined
  readonly roots?: ReadonlyArray<{ readonly uri: string; readonly name?: string | undefined }> | undefined
}

/** The capabilities the client declares for what it answers. */
export const capabilities = (answers: Answers) => ({
  elicitation: { form: { applyDefaults: true }, url: {} },
  ...(answers.sampling === undefined ? {} : { sampling: {} }),
  ...(answers.roots === undefined ? {} : { roots: { listChanged: false } })
})

/** Answers `sampling/createMessage` with the sampling service and `roots/list` with the roots, when given. */
export const serve = (client: Client, name: string, answers: Answers): void => {
  const { sampling, roots } = answers
  if (roots !== undefined) {
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: roots.map((root) => ({ uri: root.uri, ...(root.name === undefined ? {} : { name: root.name }) }))
    }))
  }
  if (sampling === undefined) return
  client.setRequestHandler(CreateMessageRequestSchema, async (request): Promise<CreateMessageResult> => {
    const { messages, systemPrompt, maxTokens } = request.params
    const texts = messages.map((message) => {
      const blocks = Array.isArray(message.content) ? message.content : [message.content]
      if (!blocks.every((block) => block.type === "text")) {
        throw new McpError(ErrorCode.InvalidParams, "this client samples text messages only")
      }
      return { role: message.role, text: blocks.map((block) => (block.type === "text" ? block.text : "")).join("\n") }
    })
    const answered = await Effect.runPromise(
      Effect.result(
        sampling.sample({
          server: name,
          messages: texts,
          ...(systemPrompt === undefined ? {} : { systemPrompt }),
          maxTokens
        })
      )
    )
    if (answered._tag === "Failure") throw new McpError(ErrorCode.InternalError, answered.failure.message)
    const { text, model, stopReason } = answered.success
    return { role: "assistant", content: { type: "text", text }, model, stopReason }
  })
}

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
