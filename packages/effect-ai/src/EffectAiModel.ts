/**
 * An `effect/ai` `LanguageModel` as Rolecraft's `LanguageModel`: any model
 * built for Effect's AI modules (a provider package's layer, or your own made
 * with effect/ai's `LanguageModel.make`) runs Rolecraft's llm actions and chat
 * turns. Tool calls are left to Rolecraft: effect/ai's own tool resolution is
 * off, so every call the model makes runs through the agent's pipeline.
 *
 * It is a second provider path beside `@rolecraft/openai`, read by the same
 * stream reader and bounded by the same limits: every part effect/ai's
 * providers emit is read — text, reasoning, tool calls, sources (as
 * citations), the model id, the finish reason with its usage, and errors.
 *
 * @example
 * ```ts
 * import { Agent, type Role } from "@rolecraft/core"
 * import { EffectAiModel } from "@rolecraft/effect-ai"
 * import { Effect, Layer } from "effect"
 * import type { LanguageModel } from "effect/ai"
 *
 * declare const Guide: Role.Any
 * // any effect/ai model: a provider package's layer
 * declare const providerModel: Layer.Layer<LanguageModel.LanguageModel>
 *
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "guide", roles: [Guide] })
 *   return yield* agent.chat("Three things to see in Lisbon?")
 * }).pipe(Effect.scoped, Effect.provide(EffectAiModel.layer({ name: "my-provider" }).pipe(Layer.provide(providerModel))))
 * ```
 *
 * @since 0.1.0
 */
import { type ActionError, LanguageModel } from "@rolecraft/core"
import { type AiError, LanguageModel as AiLanguageModel, type Prompt as AiPrompt, type Response } from "effect/ai"
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as Errors from "./internal/error.ts"
import { promptOf, toolChoiceOf, toolkitOf } from "./internal/request.ts"
import { chunker, responseOf } from "./internal/response.ts"

/**
 * Options of {@link make} and {@link layer}.
 *
 * - `name`: the provider's name reported on model spans (default
 *   `"effect-ai"`); give the real one, e.g. `"anthropic"`.
 * - `model`: the model name reported on spans when a request names none.
 *   The effect/ai model's own configuration picks the model and its
 *   settings: effect/ai has no per-request model or temperature, so a
 *   request's `model` and `temperature` (an llm action's, a role's
 *   `spec.model`, a chat option) are not sent.
 * - `timeout`, `idleTimeout`, `maxReplyCharacters`: the limits of every
 *   call, as `LanguageModel.make` takes them (defaults 10 minutes, 2
 *   minutes and 1,000,000 characters).
 * - `secrets` (since 0.2.0): the secrets the effect/ai model's provider
 *   holds — its API key, as a `Redacted` (e.g. read with
 *   `Config.Redacted("ANTHROPIC_API_KEY")` where you build its layer).
 *   effect/ai's `LanguageModel` does not say which key its provider uses,
 *   so name it here: every model call's error is scrubbed of it, and the
 *   model declares it, so an agent redacts it from every error, event,
 *   span, log and tool message, whatever quoted it. Default none.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  readonly name?: string | undefined
  readonly model?: string | undefined
  readonly timeout?: Duration.Input | undefined
  readonly idleTimeout?: Duration.Input | undefined
  readonly maxReplyCharacters?: number | undefined
  readonly secrets?: ReadonlyArray<Redacted.Redacted<string>> | undefined
}

// =============================================================================
// Errors
// =============================================================================

/**
 * The category of an effect/ai failure, by its reason:
 *
 * | reason | category |
 * | --- | --- |
 * | `RateLimitError`, `InternalProviderError`, `NetworkError` (`TransportError`) | TRANSIENT (`retryAfter` and `status` kept) |
 * | `ToolNotFoundError` | NOT_FOUND |
 * | `InvalidRequestError`, `InvalidUserInputError`, `UnsupportedSchemaError`, `ToolConfigurationError`, `ToolkitRequiredError`, `ToolParameterValidationError`, `StructuredOutputError`, `NetworkError` (`InvalidUrlError`) | VALIDATION |
 * | anything else (`AuthenticationError`, `QuotaExhaustedError`, `ContentPolicyError`, `InvalidResponseError`, `InvalidOutputError`, `UnknownError`, tool result errors, `NetworkError` (`EncodeError`)) | EXECUTION (`status` kept) |
 *
 * `retryAfter` is the reason's own, else the `retry-after` header of the
 * HTTP response it carries (delta-seconds, or an HTTP date relative to
 * `options.nowMs`, the current time in milliseconds). `options.action`
 * names the error; the message is effect/ai's own.
 *
 * @category errors
 * @since 0.1.0
 */
export const fromAiError: (
  error: AiError.AiError,
  options: { readonly action: string; readonly nowMs: number }
) => ActionError.ActionError = Errors.fromAiError

// =============================================================================
// The model
// =============================================================================

/** Completes when `signal` aborts: a limit of the call passed, and the effect/ai stream must end. */
const aborted = (signal: AbortSignal): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    if (signal.aborted) return resume(Effect.void)
    const onAbort = () => resume(Effect.void)
    signal.addEventListener("abort", onAbort, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", onAbort))
  })

/**
 * Rolecraft's `LanguageModel` over the effect/ai `LanguageModel` in the
 * context, built with Rolecraft's own `LanguageModel.make` (so its span,
 * usage metering, redaction, limits and failure mapping apply).
 *
 * Each `generate` call is one effect/ai `generateText` call with
 * `disableToolCallResolution: true` and `toolCallValidation: "deferred"`:
 *
 * - messages become an effect/ai prompt (an assistant message's reasoning as
 *   a reasoning part; tool results under the name of the call they answer;
 *   Rolecraft's `{"error":{…}}` answers marked as failures);
 * - the offered tools become effect/ai dynamic tools carrying Rolecraft's
 *   JSON Schema (and `strict` as the `Tool.Strict` annotation), with no
 *   handlers: effect/ai never runs them, and a call to a name that was not
 *   offered comes back to Rolecraft (NOT_FOUND there) instead of failing the
 *   response;
 * - `toolChoice` is passed on with the tools (a request without tools sends
 *   neither); `model` and `temperature` are not (see {@link Options});
 * - the answer's text, reasoning, tool calls (arguments as JSON text; calls
 *   the provider ran itself are left out), sources (as citations: a URL and
 *   title, or a document's title), usage (input and output totals, else the
 *   sum of their parts), finish reason and model id are mapped back;
 * - an `AiError` becomes an `ActionError` by {@link fromAiError}.
 *
 * Interruption interrupts the effect/ai call. Streams (`stream`, a chat
 * turn's `agent.chatStream`) go through the effect/ai model's `streamText`:
 * text and reasoning deltas, each tool call's start and argument deltas (or
 * the whole call when the provider sends it at once), sources, the model id,
 * then the finish reason with the usage; an error part ends the stream,
 * TRANSIENT when its type says the provider is busy or failed (overloaded,
 * rate limited, a server error), else EXECUTION. A stream ends when its
 * call's limits pass (see {@link Options}).
 *
 * Reasoning goes back to effect/ai as text only: a provider that needs more
 * to take it back (Anthropic's thinking signatures) drops it.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (
  options?: Options
): Effect.Effect<LanguageModel.LanguageModel["Service"], never, AiLanguageModel.LanguageModel> =>
  Effect.map(Effect.service(AiLanguageModel.LanguageModel), (model) => {
    // One boundary for effect/ai's overloaded `generateText` and `streamText`: with resolution off, a
    // toolkit of dynamic tools needs no handlers and fails only with `AiError`.
    const optionsOf = (request: LanguageModel.Request) => {
      const tools = request.tools ?? []
      const prompt = promptOf(request.messages)
      return tools.length === 0
        ? { prompt }
        : {
            prompt,
            toolkit: toolkitOf(tools),
            disableToolCallResolution: true as const,
            toolCallValidation: "deferred" as const,
            ...(request.toolChoice === undefined ? {} : { toolChoice: toolChoiceOf(request.toolChoice) })
          }
    }
    const failed = (action: string) => (error: unknown) =>
      Effect.flatMap(Clock.currentTimeMillis, (nowMs) => Effect.fail(Errors.fromErrorPart(error, { action, nowMs })))
    return LanguageModel.make(
      {
        generate: ({ request, action }) =>
          (
            model.generateText(optionsOf(request) as { readonly prompt: AiPrompt.Prompt }) as Effect.Effect<
              AiLanguageModel.GenerateTextResponse<any, any>,
              AiError.AiError
            >
          ).pipe(Effect.map(responseOf), Effect.catch(failed(action))),
        stream: ({ request, action, signal }) =>
          Stream.suspend(() => {
            const read = chunker((error) => Errors.fromErrorPart(error, { action, nowMs: Date.now() }))
            return (
              model.streamText(optionsOf(request) as { readonly prompt: AiPrompt.Prompt }) as Stream.Stream<
                Response.StreamPart<any, any>,
                AiError.AiError
              >
            ).pipe(
              Stream.catch((error) => Stream.fromEffect(failed(action)(error))),
              Stream.mapArrayEffect((batch) => {
                const chunks = read(batch)
                return Result.isSuccess(chunks)
                  ? Effect.succeed([chunks.success] as const)
                  : Effect.fail(chunks.failure)
              }),
              Stream.flattenIterable,
              // effect/ai knows nothing of the signal: the stream ends when it aborts.
              Stream.interruptWhen(aborted(signal))
            )
          })
      },
      {
        name: options?.name ?? "effect-ai",
        model: options?.model,
        timeout: options?.timeout,
        idleTimeout: options?.idleTimeout,
        maxReplyCharacters: options?.maxReplyCharacters,
        secrets: options?.secrets
      }
    )
  })

/**
 * A layer of Rolecraft's `LanguageModel` over the effect/ai `LanguageModel`
 * it is given (see {@link make}).
 *
 * @example
 * ```ts
 * import { Config, Effect, Layer } from "effect"
 * import type { LanguageModel as AiLanguageModel } from "effect/ai"
 * import { EffectAiModel } from "@rolecraft/effect-ai"
 *
 * // Any effect/ai model layer: a provider package's, or one of your own.
 * declare const AiModel: Layer.Layer<AiLanguageModel.LanguageModel>
 *
 * // The key the provider reads, named so the agent redacts it everywhere.
 * const RolecraftModel = Layer.unwrap(
 *   Effect.map(Config.Redacted("ANTHROPIC_API_KEY"), (key) =>
 *     EffectAiModel.layer({ name: "anthropic", secrets: [key] })
 *   )
 * ).pipe(Layer.provide(AiModel))
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (
  options?: Options
): Layer.Layer<LanguageModel.LanguageModel, never, AiLanguageModel.LanguageModel> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
