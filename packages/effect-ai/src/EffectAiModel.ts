/**
 * An `effect/ai` `LanguageModel` as Rolecraft's `LanguageModel`: any model
 * built for Effect's AI modules (a provider package's layer, or your own made
 * with effect/ai's `LanguageModel.make`) runs Rolecraft's llm actions and chat
 * turns. Tool calls are left to Rolecraft: effect/ai's own tool resolution is
 * off, so every call the model makes runs through the agent's pipeline.
 *
 * @since 0.1.0
 */
import { ActionError, LanguageModel, type Prompt } from "@rolecraft/core"
import {
  type AiError,
  LanguageModel as AiLanguageModel,
  Prompt as AiPrompt,
  type Response,
  Tool,
  Toolkit
} from "effect/ai"
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Headers from "effect/http/Headers"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"

const { ActionNotFound, ExecutionFailure, TransientFailure, ValidationError } = ActionError

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
 * - `secrets` (since 0.2.0): the secrets the effect/ai model's provider
 *   holds — its API key, as a `Redacted` (e.g. read with
 *   `Config.redacted("ANTHROPIC_API_KEY")` where you build its layer).
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
  readonly secrets?: ReadonlyArray<Redacted.Redacted<string>> | undefined
}

// =============================================================================
// Requests: Rolecraft messages and tools to an effect/ai prompt and toolkit
// =============================================================================

type Json = Record<string, unknown>

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

// A small pure boundary around `JSON.parse`: text that is not JSON stays text.
const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** A tool message's content as effect/ai's tool result: a failure is Rolecraft's `{"error":{…}}`. */
const toolResultOf = (content: string): { readonly result: unknown; readonly isFailure: boolean } => {
  const value = parsed(content)
  const isFailure = isRecord(value) && Object.keys(value).length === 1 && isRecord(value.error)
  return { result: value, isFailure }
}

/**
 * Rolecraft's messages as an effect/ai prompt (the encoded form `Prompt.make`
 * decodes). A tool message is answered under the name of the call it
 * answers, taken from the assistant message that made it.
 */
const promptOf = (messages: ReadonlyArray<Prompt.Message>): AiPrompt.Prompt => {
  const names = new Map<string, string>()
  const encoded: Array<AiPrompt.MessageEncoded> = messages.map((message): AiPrompt.MessageEncoded => {
    switch (message.role) {
      case "system":
        return { role: "system", content: message.content }
      case "user":
        return { role: "user", content: message.content }
      case "assistant": {
        const calls = message.toolCalls ?? []
        for (const call of calls) names.set(call.id, call.name)
        return {
          role: "assistant",
          content: [
            ...(message.content.length === 0 ? [] : [{ type: "text" as const, text: message.content }]),
            ...calls.map((call) => ({
              type: "tool-call" as const,
              id: call.id,
              name: call.name,
              params: call.arguments.trim().length === 0 ? {} : parsed(call.arguments),
              providerExecuted: false
            }))
          ]
        }
      }
      default:
        return {
          role: "tool",
          content: [
            {
              type: "tool-result",
              id: message.toolCallId,
              name: names.get(message.toolCallId) ?? "",
              providerExecuted: false,
              ...toolResultOf(message.content)
            }
          ]
        }
    }
  })
  return AiPrompt.make(encoded)
}

/**
 * The tools of a request as effect/ai dynamic tools: the name, description
 * and JSON Schema Rolecraft projected, with no Effect Schema, so effect/ai
 * neither validates nor decodes the arguments — Rolecraft's pipeline does.
 */
const toolkitOf = (tools: NonNullable<LanguageModel.Request["tools"]>) =>
  Toolkit.make(
    ...tools.map((tool) =>
      Tool.dynamic(tool.name, { description: tool.description, parameters: tool.parameters }).annotate(
        Tool.Strict,
        tool.strict
      )
    )
  )

const toolChoiceOf = (choice: LanguageModel.ToolChoice): AiLanguageModel.ToolChoice<string> =>
  typeof choice === "string" ? choice : { tool: choice.tool }

// =============================================================================
// Responses: effect/ai parts to Rolecraft's answer
// =============================================================================

const finishReasons: Readonly<Record<Response.FinishReason, string | undefined>> = {
  stop: "stop",
  length: "length",
  "tool-calls": "tool_calls",
  "content-filter": "content_filter",
  error: "other",
  pause: "other",
  other: "other",
  // No reason given: Rolecraft infers it from the tool calls.
  unknown: undefined
}

const sum = (...counts: ReadonlyArray<number | undefined>): number | undefined =>
  counts.every((count) => count === undefined) ? undefined : counts.reduce<number>((a, b) => a + (b ?? 0), 0)

const argumentsOf = (params: unknown): string => (typeof params === "string" ? params : JSON.stringify(params ?? {}))

const responseOf = (response: AiLanguageModel.GenerateTextResponse<any, any>): LanguageModel.ProviderResponse => {
  const { usage } = response
  const metadata = response.content.find((part) => part.type === "response-metadata")
  return {
    text: response.text,
    // A call the provider ran itself (a built-in tool) is not Rolecraft's to run.
    toolCalls: response.toolCalls
      .filter((part) => part.providerExecuted !== true)
      .map((part) => ({ id: part.id, name: part.name, arguments: argumentsOf(part.params) })),
    usage: {
      inputTokens:
        usage.inputTokens.total ??
        sum(usage.inputTokens.uncached, usage.inputTokens.cacheRead, usage.inputTokens.cacheWrite),
      outputTokens: usage.outputTokens.total ?? sum(usage.outputTokens.text, usage.outputTokens.reasoning)
    },
    finishReason: finishReasons[response.finishReason],
    model: metadata?.type === "response-metadata" ? metadata.modelId : undefined
  }
}

// =============================================================================
// Errors
// =============================================================================

const statusOf = (reason: AiError.AiErrorReason): number | undefined =>
  "http" in reason && reason.http?.response !== undefined ? reason.http.response.status : undefined

const retryAfterOf = (reason: AiError.AiErrorReason, nowMs: number): Duration.Duration | undefined => {
  if ("retryAfter" in reason && reason.retryAfter !== undefined) return reason.retryAfter
  const headers = "http" in reason ? reason.http?.response?.headers : undefined
  const header = headers?.["retry-after"]
  if (typeof header !== "string") return undefined
  const parsed = Headers.parseRetryAfter(header)
  return Result.isSuccess(parsed) ? Headers.retryAfterDelay(parsed.success, nowMs) : undefined
}

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
export const fromAiError = (
  error: AiError.AiError,
  options: { readonly action: string; readonly nowMs: number }
): ActionError.ActionError => {
  const { action } = options
  const { reason } = error
  const message = `${action}: ${error.message}`
  const status = statusOf(reason)
  const withStatus = status === undefined ? {} : { status }
  switch (reason._tag) {
    case "RateLimitError":
    case "InternalProviderError": {
      const retryAfter = retryAfterOf(reason, options.nowMs)
      return new TransientFailure({
        action,
        message,
        ...withStatus,
        ...(retryAfter === undefined ? {} : { retryAfter })
      })
    }
    case "NetworkError":
      return reason.reason === "TransportError"
        ? new TransientFailure({ action, message })
        : reason.reason === "InvalidUrlError"
          ? new ValidationError({ action, message, issues: [{ path: "", message: reason.message }] })
          : new ExecutionFailure({ action, message })
    case "ToolNotFoundError":
      return new ActionNotFound({ action, message, available: reason.availableTools })
    case "InvalidRequestError":
    case "InvalidUserInputError":
    case "UnsupportedSchemaError":
    case "ToolConfigurationError":
    case "ToolkitRequiredError":
    case "ToolParameterValidationError":
    case "StructuredOutputError":
      return new ValidationError({ action, message, issues: [{ path: "", message: reason.message }] })
    default:
      return new ExecutionFailure({ action, message, ...withStatus })
  }
}

// =============================================================================
// The model
// =============================================================================

/**
 * Rolecraft's `LanguageModel` over the effect/ai `LanguageModel` in the
 * context, built with Rolecraft's own `LanguageModel.make` (so its span,
 * usage metering, redaction and failure mapping apply).
 *
 * Each `generate` call is one effect/ai `generateText` call with
 * `disableToolCallResolution: true` and `toolCallValidation: "deferred"`:
 *
 * - messages become an effect/ai prompt (tool results under the name of the
 *   call they answer; Rolecraft's `{"error":{…}}` answers marked as failures);
 * - the offered tools become effect/ai dynamic tools carrying Rolecraft's
 *   JSON Schema (and `strict` as the `Tool.Strict` annotation), with no
 *   handlers: effect/ai never runs them, and a call to a name that was not
 *   offered comes back to Rolecraft (NOT_FOUND there) instead of failing the
 *   response;
 * - `toolChoice` is passed on with the tools (a request without tools sends
 *   neither); `model` and `temperature` are not (see {@link Options});
 * - the answer's text, tool calls (arguments as JSON text; calls the
 *   provider ran itself are left out), usage (input and output totals, else
 *   the sum of their parts), finish reason and model id are mapped back;
 * - an `AiError` becomes an `ActionError` by {@link fromAiError}.
 *
 * Interruption interrupts the effect/ai call. Streams (`stream`, a chat
 * turn's `agent.chatStream`) go through the effect/ai model's `streamText`:
 * text deltas, each tool call's start and argument deltas (or the whole call
 * when the provider sends it at once), the model id, then the finish reason
 * with the usage.
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
    const failed = (action: string) => (error: AiError.AiError) =>
      Effect.flatMap(Clock.currentTimeMillis, (nowMs) => Effect.fail(fromAiError(error, { action, nowMs })))
    return LanguageModel.make(
      {
        generate: ({ request, action }) =>
          (
            model.generateText(optionsOf(request) as { readonly prompt: AiPrompt.Prompt }) as Effect.Effect<
              AiLanguageModel.GenerateTextResponse<any, any>,
              AiError.AiError
            >
          ).pipe(Effect.map(responseOf), Effect.catch(failed(action))),
        stream: ({ request, action }) =>
          Stream.suspend(() => {
            const chunks = chunker()
            return (
              model.streamText(optionsOf(request) as { readonly prompt: AiPrompt.Prompt }) as Stream.Stream<
                Response.StreamPart<any, any>,
                AiError.AiError
              >
            ).pipe(
              Stream.filterMap((part) => chunks(part)),
              Stream.catch((error) => Stream.fromEffect(failed(action)(error)))
            )
          })
      },
      { name: options?.name ?? "effect-ai", model: options?.model, secrets: options?.secrets }
    )
  })

/**
 * effect/ai stream parts as Rolecraft's provider chunks: text deltas; a tool
 * call's start (id, name) and argument deltas, or a whole call at once when
 * the provider streams none (each call its own index, in order); the model
 * id; and the finish reason with the usage. Calls the provider ran itself are
 * left out.
 */
const chunker = () => {
  const indexes = new Map<string, number>()
  const skipped = new Set<string>()
  const indexOf = (id: string) => {
    const known = indexes.get(id)
    if (known !== undefined) return known
    const index = indexes.size
    indexes.set(id, index)
    return index
  }
  return (part: Response.StreamPart<any, any>): Result.Result<LanguageModel.ProviderChunk, void> => {
    switch (part.type) {
      case "text-delta":
        return Result.succeed({ text: part.delta })
      case "tool-params-start":
        if (part.providerExecuted === true) {
          skipped.add(part.id)
          return Result.fail(undefined)
        }
        return Result.succeed({ toolCalls: [{ index: indexOf(part.id), id: part.id, name: part.name }] })
      case "tool-params-delta":
        return skipped.has(part.id) || !indexes.has(part.id)
          ? Result.fail(undefined)
          : Result.succeed({ toolCalls: [{ index: indexOf(part.id), arguments: part.delta }] })
      case "tool-call":
        if (part.providerExecuted === true || indexes.has(part.id)) return Result.fail(undefined)
        return Result.succeed({
          toolCalls: [{ index: indexOf(part.id), id: part.id, name: part.name, arguments: argumentsOf(part.params) }]
        })
      case "response-metadata":
        return part.modelId === undefined ? Result.fail(undefined) : Result.succeed({ model: part.modelId })
      case "finish": {
        const { usage } = part
        return Result.succeed({
          finishReason: finishReasons[part.reason] ?? (indexes.size > 0 ? "tool_calls" : "stop"),
          usage: {
            inputTokens:
              usage.inputTokens.total ??
              sum(usage.inputTokens.uncached, usage.inputTokens.cacheRead, usage.inputTokens.cacheWrite),
            outputTokens: usage.outputTokens.total ?? sum(usage.outputTokens.text, usage.outputTokens.reasoning)
          }
        })
      }
      default:
        return Result.fail(undefined)
    }
  }
}

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
