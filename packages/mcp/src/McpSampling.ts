/**
 * What an MCP client answers when a server asks it to sample a model
 * (`sampling/createMessage`): the server sends messages (and a system
 * prompt, a token budget), the client's model writes the next one. The user
 * provides the service; `layerLanguageModel` answers with the `LanguageModel`
 * the agent uses, so the call goes through that model's own limits (its
 * deadline, reply cap and secrets), and its token budget is capped here.
 * Without a service, `McpClientSdk` does not declare sampling, and servers
 * do not ask.
 *
 * @example
 * ```ts
 * import { McpClientSdk, McpSampling } from "@rolecraft/mcp"
 * import { Effect, Layer } from "effect"
 *
 * const client = McpClientSdk.layer().pipe(
 *   Layer.provide(
 *     Layer.succeed(McpSampling.McpSampling, {
 *       sample: () => Effect.succeed({ text: "no", model: "fixed", stopReason: "endTurn" })
 *     })
 *   )
 * )
 * ```
 *
 * @since 0.2.0
 */
import { LanguageModel } from "@rolecraft/core/LanguageModel"
import type * as Prompt from "@rolecraft/core/Prompt"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * One request: `server` is the action key of the server asking; `messages`
 * its conversation (text only: a request with an image or audio block is
 * refused before it reaches the service); `systemPrompt` and `maxTokens` as
 * the server sent them.
 *
 * @category models
 * @since 0.2.0
 */
export interface Request {
  readonly server: string
  readonly messages: ReadonlyArray<{ readonly role: "user" | "assistant"; readonly text: string }>
  readonly systemPrompt?: string | undefined
  readonly maxTokens: number
}

/**
 * The message written: its `text`, the `model` that wrote it, and why it
 * stopped (`endTurn`, `maxTokens`, or another reason).
 *
 * @category models
 * @since 0.2.0
 */
export interface Response {
  readonly text: string
  readonly model: string
  readonly stopReason: string
}

/**
 * The service: answers one request, or fails with a message the server
 * receives as the request's error.
 *
 * @category services
 * @since 0.2.0
 */
export class McpSampling extends Context.Service<
  McpSampling,
  { readonly sample: (request: Request) => Effect.Effect<Response, { readonly message: string }> }
>()("@rolecraft/mcp/McpSampling") {}

/**
 * The default cap on a sampling request's `maxTokens`: 1,024 tokens.
 *
 * @category constants
 * @since 0.2.0
 */
export const defaultMaxTokens = 1_024

/**
 * Sampling with the `LanguageModel` of the layer's context (the agent's
 * model): the request's messages and system prompt, at most `maxTokens`
 * tokens (the smaller of the server's budget and this cap, default 1,024).
 * A failed model call fails the request with its message (already free of
 * the model's secrets).
 *
 * @example
 * ```ts
 * import { McpClientSdk, McpSampling } from "@rolecraft/mcp"
 * import { ScriptedModel } from "@rolecraft/testing"
 * import { Layer } from "effect"
 *
 * const client = McpClientSdk.layer().pipe(
 *   Layer.provide(McpSampling.layerLanguageModel()),
 *   Layer.provide(ScriptedModel.layer([ScriptedModel.reply("Paris")]))
 * )
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const layerLanguageModel = (options?: {
  readonly maxTokens?: number | undefined
}): Layer.Layer<McpSampling, never, LanguageModel> =>
  Layer.effect(
    McpSampling,
    Effect.map(Effect.service(LanguageModel), (model) => fromLanguageModel(model, options))
  )

/**
 * The sampling service of one `LanguageModel` (see {@link layerLanguageModel}).
 * `McpClientSdk` uses it by itself, with the `LanguageModel` in context when
 * a connection opens (the agent's), when no `McpSampling` is provided.
 *
 * @category constructors
 * @since 0.2.0
 */
export const fromLanguageModel = (
  model: LanguageModel["Service"],
  options?: { readonly maxTokens?: number | undefined }
): McpSampling["Service"] => {
  const cap = Math.max(1, Math.floor(options?.maxTokens ?? defaultMaxTokens))
  return McpSampling.of({
    sample: (request) => {
      const messages: Array<Prompt.Message> = [
        ...(request.systemPrompt === undefined ? [] : [{ role: "system" as const, content: request.systemPrompt }]),
        ...request.messages.map((message) => ({ role: message.role, content: message.text }))
      ]
      return model.generate({ messages, maxTokens: Math.min(cap, Math.max(1, request.maxTokens)) }).pipe(
        Effect.map(
          (response): Response => ({
            text: response.text,
            model: response.model ?? "unknown",
            stopReason: response.finishReason === "length" ? "maxTokens" : "endTurn"
          })
        ),
        Effect.mapError((error) => ({ message: error.message }))
      )
    }
  })
}
