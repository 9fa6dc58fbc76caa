/**
 * Rolecraft's `LanguageModel` over the official `@anthropic-ai/sdk`: Claude's
 * Messages API, built with `LanguageModel.make`, generating or streaming.
 *
 * What Claude attaches and needs back round-trips: a reply's `thinking` and
 * `redacted_thinking` blocks, signatures included, are kept on the assistant
 * message (`providerData.anthropic`) and sent back exactly as received on the
 * next request — across the tool round trips of a chat turn, threads, paused
 * and durable states. Prompt caching follows one documented rule (see
 * {@link Options} `cache`). A turn the API pauses (`pause_turn`) is continued
 * as the API documents, and cache reads and writes are counted in the usage
 * as parts of the input.
 *
 * As the openai layer: the SDK is constructed with `maxRetries: 0` and an
 * explicit `timeout`, so only the calling action's resilience policy retries;
 * every call is bounded as a whole by that `timeout` (a stream too), a stream
 * also by an idle limit between events, and a reply's size by a cap checked
 * while its body is read; interruption aborts the HTTP request; SDK errors
 * map to the action error categories (see {@link toActionError}); the API key
 * is a `Redacted` value, scrubbed from every error, never logged (the SDK's
 * logger is off) and never read from the environment by the SDK; the SDK's
 * own OpenTelemetry spans are off (the call's `chat {model}` span is the
 * core's).
 *
 * @example
 * ```ts
 * import { Agent, type Role } from "@rolecraft/core"
 * import { AnthropicLanguageModel } from "@rolecraft/anthropic"
 * import { Effect, Redacted } from "effect"
 *
 * declare const Guide: Role.Any
 *
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "guide", roles: [Guide] })
 *   return yield* agent.chat("Three things to see in Lisbon?")
 * }).pipe(
 *   Effect.scoped,
 *   Effect.provide(
 *     AnthropicLanguageModel.layer({
 *       model: "claude-sonnet-4-5",
 *       apiKey: Redacted.make(process.env.ANTHROPIC_API_KEY ?? ""),
 *       thinking: { type: "enabled", budgetTokens: 2048 },
 *       maxTokens: 8192
 *     })
 *   )
 * )
 * ```
 *
 * @since 0.3.0
 */
import Anthropic from "@anthropic-ai/sdk"
import { ActionError, BoundedFetch, LanguageModel, type ModelResponse, ProviderProfile } from "@rolecraft/core"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Failure from "./internal/failure.ts"
import * as WireRequest from "./internal/request.ts"
import * as WireResponse from "./internal/response.ts"
import * as WireStream from "./internal/stream.ts"

/**
 * Options of {@link layer}.
 *
 * - `model`: the default model name, used when a request names none (an llm
 *   action's role without `spec.model.name`). With neither, a call fails with
 *   VALIDATION.
 * - `apiKey`: the API key, sent as the SDK sends it (`Authorization: Bearer …`
 *   in `@anthropic-ai/sdk` 1.x). Without it no credential is sent (a local
 *   endpoint that needs none).
 * - `baseURL`: the API's base URL, without `/v1`; default
 *   `https://api.anthropic.com`.
 * - `maxTokens`: `max_tokens` when a request gives no `maxTokens` (the API
 *   requires one); default 4096. With thinking on a budget, it must be more
 *   than `budgetTokens`: a call whose `max_tokens` is not fails with
 *   VALIDATION naming `thinking.budgetTokens`, before anything is sent.
 * - `thinking`: `{ type: "enabled", budgetTokens }` (an integer of at least
 *   1024, else VALIDATION),
 *   `{ type: "adaptive" }` or `{ type: "disabled" }`, sent as `thinking`;
 *   default none sent (the model's own default). The thinking streams as
 *   reasoning and its signed blocks are sent back on every later request.
 * - `cache`: where `cache_control: { type: "ephemeral" }` breakpoints go.
 *   `"auto"` (the default): after the last tool, after the system prompt,
 *   and on the last block of the conversation — three of the API's four
 *   breakpoints — so each step of a turn reads from the cache what the step
 *   before wrote (a prefix shorter than the model's minimum is not cached,
 *   and costs nothing extra). Cache writes cost more than plain input
 *   (1.25× for five minutes) and reads far less (0.1×): `"none"` sends no
 *   breakpoint, for one-off calls whose prefix is never read again.
 * - `timeout`: the whole call's deadline, from the request to the last event
 *   of a stream (TIMEOUT when it passes, the request aborted); default 2
 *   minutes. A turn the API pauses and this layer continues is one call.
 * - `idleTimeout`: how long a stream may send no event before the call ends
 *   with TIMEOUT; default 2 minutes. `ping` events count as nothing.
 * - `maxReplyCharacters`: the cap on one reply's size — its text, thinking,
 *   refusal and tool-call arguments together; default 1,000,000; checked as
 *   the reply arrives and on the HTTP body (16 bytes a character, at least
 *   1 MiB), past it EXECUTION naming the cap, the request aborted.
 * - `maxContinuations`: how many times a turn the API paused (`pause_turn`)
 *   is continued before its reply is taken as it stands (finish reason
 *   `"other"`); default 4.
 * - `fetch`: the `fetch` the SDK sends requests with; default the global one.
 * - `headers`: extra headers sent with every request (e.g. `anthropic-beta`).
 *
 * The SDK never reads `ANTHROPIC_*` environment variables here (use
 * {@link layerConfig} to read them through Config).
 *
 * @category models
 * @since 0.3.0
 */
export interface Options {
  readonly model?: string | undefined
  readonly apiKey?: Redacted.Redacted<string> | undefined
  readonly baseURL?: string | undefined
  readonly maxTokens?: number | undefined
  readonly thinking?: Thinking | undefined
  readonly cache?: "auto" | "none" | undefined
  readonly timeout?: Duration.Input | undefined
  readonly idleTimeout?: Duration.Input | undefined
  readonly maxReplyCharacters?: number | undefined
  readonly maxContinuations?: number | undefined
  readonly fetch?: typeof globalThis.fetch | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * Claude's thinking setting: a token budget (`enabled`), `adaptive` (the
 * model decides), or `disabled`.
 *
 * @category models
 * @since 0.3.0
 */
export type Thinking =
  | { readonly type: "enabled"; readonly budgetTokens: number }
  | { readonly type: "adaptive" }
  | { readonly type: "disabled" }

const defaultTimeout = Duration.minutes(2)
const defaultMaxReplyCharacters = 1_000_000
const defaultBaseURL = "https://api.anthropic.com"
const defaultMaxTokens = 4096
const defaultMaxContinuations = 4

/**
 * The Messages API request body of a model request (no streaming), with the
 * layer's settings: `max_tokens` (the request's `maxTokens`, else
 * `settings.maxTokens`), `thinking`, and the cache rule (see {@link Options}).
 *
 * @category wire format
 * @since 0.3.0
 */
export const requestBody = (
  request: LanguageModel.Request,
  model: string,
  settings?: {
    readonly maxTokens?: number | undefined
    readonly thinking?: Thinking | undefined
    readonly cache?: "auto" | "none" | undefined
  }
): Readonly<Record<string, unknown>> =>
  WireRequest.requestBody(request, model, {
    maxTokens: settings?.maxTokens ?? defaultMaxTokens,
    thinking: settings?.thinking,
    cache: settings?.cache ?? "auto"
  }) as unknown as Readonly<Record<string, unknown>>

/**
 * A Messages API reply (a `message` object) as a provider response: its
 * text, thinking (as reasoning, in the field `thinking`), tool calls, signed
 * thinking blocks (as `providerData.anthropic.thinking`), citations, stop
 * reason, refusal, model and usage (input including cache reads and writes,
 * each also its own part; reasoning a part of the output). A body without a
 * list of content blocks is EXECUTION.
 *
 * @category wire format
 * @since 0.3.0
 */
export const responseOf = (
  action: string,
  message: unknown
): Effect.Effect<ModelResponse.ProviderResponse, ActionError.ExecutionFailure> => {
  const body = message as { readonly content?: unknown } | null
  const read = WireResponse.readBlocks(action, typeof body === "object" && body !== null ? body.content : undefined)
  if (read instanceof ActionError.ExecutionFailure) return Effect.fail(read)
  const m = message as Readonly<Record<string, unknown>>
  return Effect.succeed(
    WireResponse.responseOf([read], {
      stopReason: m.stop_reason,
      stopDetails: m.stop_details,
      model: m.model,
      usage: WireResponse.usageOf(m.usage)
    })
  )
}

/**
 * Maps an SDK failure to an action error:
 *
 * - `APIConnectionTimeoutError` → `Timeout` (`after` = the SDK timeout);
 * - an `error` event inside a 200 stream → by its type: `overloaded_error`,
 *   `api_error`, `rate_limit_error`, `timeout_error` `TransientFailure`,
 *   anything else (`invalid_request_error`, …) `ExecutionFailure`;
 * - a body past the reply cap → `ExecutionFailure` naming
 *   `maxReplyCharacters`;
 * - `APIConnectionError` (refused, reset, DNS) → `TransientFailure` naming
 *   `options.baseURL` when given (without user info, query or fragment);
 * - an HTTP status → `LanguageModel.httpFailure`: 408, 429 and 5xx (529
 *   `overloaded_error` included) `TransientFailure`, with `retryAfter` from
 *   `retry-after-ms` / `retry-after`; 400, 401, 403, 404, 413 and other 4xx
 *   `ExecutionFailure` with the status and an excerpt of the API's message;
 * - a 2xx body that is not JSON → `ExecutionFailure` ("malformed answer");
 * - anything else → `ExecutionFailure`.
 *
 * @category wire format
 * @since 0.3.0
 */
export const toActionError: (
  action: string,
  error: unknown,
  options: {
    readonly timeout: Duration.Duration
    readonly nowMs: number
    readonly baseURL?: string | undefined
    readonly maxReplyCharacters?: number | undefined
  }
) => ActionError.ActionError = Failure.toActionError

// The SDK refuses to start without a credential; a keyless endpoint gets this placeholder, and the header is
// removed so it is never sent.
const noKey = "rolecraft-no-api-key"

interface Call {
  readonly client: Anthropic
  readonly action: string
  readonly signal: AbortSignal
  readonly failure: Omit<Failure.FailureOptions, "nowMs">
  readonly maxContinuations: number
}

/** One non-streamed call, continued while the API pauses it; its reads and the last reply's ending. */
const generateCall = async (call: Call, first: WireRequest.Body): Promise<ModelResponse.ProviderResponse> => {
  const reads: Array<WireResponse.Read> = []
  let usage: ModelResponse.ProviderUsage | undefined
  let body = first
  for (let round = 0; ; round++) {
    let message: Readonly<Record<string, unknown>>
    try {
      // The one boundary where the SDK's types meet the body built here: the API judges it.
      message = (await call.client.messages.create(body as never, { signal: call.signal })) as unknown as Readonly<
        Record<string, unknown>
      >
    } catch (error) {
      throw Failure.toActionError(call.action, error, { ...call.failure, nowMs: Date.now() })
    }
    if (typeof message !== "object" || message === null || message.type === "error") {
      throw Failure.errorEvent(call.action, message)
    }
    const read = WireResponse.readBlocks(call.action, message.content)
    if (read instanceof ActionError.ExecutionFailure) throw read
    reads.push(read)
    usage = WireResponse.addUsage(usage, WireResponse.usageOf(message.usage))
    const paused = message.stop_reason === "pause_turn"
    if (!paused || round >= call.maxContinuations) {
      return WireResponse.responseOf(reads, {
        stopReason: paused ? "pause_turn" : message.stop_reason,
        stopDetails: message.stop_details,
        model: message.model,
        usage
      })
    }
    body = WireRequest.continued(body, message.content as ReadonlyArray<WireRequest.Block>)
  }
}

/** The chunks of one streamed call, continued while the API pauses it, read as they arrive. */
async function* streamCall(call: Call, first: WireRequest.Body): AsyncIterable<ModelResponse.ProviderChunk> {
  const state = WireStream.make()
  let usage: ModelResponse.ProviderUsage | undefined
  let body = first
  for (let round = 0; ; round++) {
    let events: AsyncIterable<unknown>
    try {
      events = (await call.client.messages.create(body as never, {
        signal: call.signal
      })) as unknown as AsyncIterable<unknown>
    } catch (error) {
      throw Failure.toActionError(call.action, error, { ...call.failure, nowMs: Date.now() })
    }
    try {
      for await (const event of events) {
        const chunk = WireStream.readEventOrThrow(call.action, state, event)
        if (chunk !== undefined && Object.keys(chunk).length > 0) yield chunk
      }
    } catch (error) {
      throw Failure.streamError(call.action, error, { ...call.failure, nowMs: Date.now() })
    }
    usage = WireResponse.addUsage(usage, WireResponse.usageOf(state.usage))
    const paused = state.stopReason === "pause_turn"
    if (!paused || round >= call.maxContinuations) {
      yield WireStream.finalChunk(state, usage)
      return
    }
    body = WireRequest.continued(body, [...state.blocks])
    WireStream.next(state)
  }
}

/**
 * Makes the service over an SDK client built from `options` (see
 * {@link Options}).
 *
 * Each call sends `POST {baseURL}/v1/messages` (see {@link requestBody}; a
 * stream asks for server-sent events) with the request's system prompt,
 * messages, tools (`name`, `description`, `input_schema`, and `strict` when
 * asked), and `temperature`, `tool_choice` and `output_config` only when
 * given; the model is the request's, else `options.model`, else the call
 * fails with VALIDATION. Errors: see {@link toActionError}; the API key is
 * scrubbed from all of them.
 *
 * @category constructors
 * @since 0.3.0
 */
export const make = (options: Options): Effect.Effect<LanguageModel.LanguageModel["Service"]> =>
  Effect.sync(() => {
    const timeout = options.timeout === undefined ? defaultTimeout : Duration.fromInputUnsafe(options.timeout)
    const maxReplyCharacters = options.maxReplyCharacters ?? defaultMaxReplyCharacters
    const baseURL = options.baseURL ?? defaultBaseURL
    const hasKey = options.apiKey !== undefined && Redacted.value(options.apiKey).length > 0
    const client = new Anthropic({
      apiKey: hasKey && options.apiKey !== undefined ? Redacted.value(options.apiKey) : noKey,
      authToken: null,
      webhookKey: null,
      baseURL,
      maxRetries: 0,
      timeout: Duration.toMillis(timeout),
      fetch: BoundedFetch.make(options.fetch ?? globalThis.fetch, BoundedFetch.bodyLimitOf(maxReplyCharacters)),
      logLevel: "off",
      openTelemetry: false,
      defaultHeaders: { ...options.headers, ...(hasKey ? {} : { Authorization: null, "x-api-key": null }) }
    })
    const settings: WireRequest.Settings = {
      maxTokens: options.maxTokens ?? defaultMaxTokens,
      thinking: options.thinking,
      cache: options.cache ?? "auto"
    }
    const maxContinuations = options.maxContinuations ?? defaultMaxContinuations
    const noModel = (action: string) =>
      new ActionError.ValidationError({
        action,
        message:
          `${action}: no model named: give AnthropicLanguageModel.layer a model, set ANTHROPIC_MODEL, ` +
          "or set the role's spec.model.name",
        issues: [{ path: "model", message: "no model named" }]
      })
    const badSettings = (action: string, request: LanguageModel.Request) => {
      const problem = WireRequest.settingsProblem(request, settings)
      return problem === undefined
        ? undefined
        : new ActionError.ValidationError({
            action,
            message: `${action}: AnthropicLanguageModel: ${problem.path} ${problem.message}`,
            issues: [problem]
          })
    }
    const failure = { timeout, baseURL, maxReplyCharacters }
    const callOf = (action: string, signal: AbortSignal): Call => ({
      client,
      action,
      signal,
      failure,
      maxContinuations
    })
    return LanguageModel.make(
      {
        generate: ({ request, model, action, signal }) => {
          if (model === undefined) return Effect.fail(noModel(action))
          const bad = badSettings(action, request)
          if (bad !== undefined) return Effect.fail(bad)
          return Effect.tryPromise({
            try: () => generateCall(callOf(action, signal), WireRequest.requestBody(request, model, settings)),
            catch: (error) => error
          }).pipe(
            Effect.catch((error) =>
              Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
                Effect.fail(Failure.toActionError(action, error, { ...failure, nowMs }))
              )
            )
          )
        },
        stream: ({ request, model, action, signal }) => {
          if (model === undefined) return Stream.fail(noModel(action))
          const bad = badSettings(action, request)
          if (bad !== undefined) return Stream.fail(bad)
          return streamCall(callOf(action, signal), WireRequest.streamingRequestBody(request, model, settings))
        }
      },
      {
        name: "anthropic",
        model: options.model,
        secrets: options.apiKey === undefined ? [] : [options.apiKey],
        timeout,
        idleTimeout: options.idleTimeout ?? defaultTimeout,
        maxReplyCharacters,
        profile
      }
    )
  })

/**
 * What this layer declares about the Messages API: "no parallel tool calls"
 * sent as `tool_choice.disable_parallel_tool_use: true`; no tool limit is
 * declared (the API documents none).
 *
 * @category constants
 * @since 0.3.0
 */
export const profile: ProviderProfile.ProviderProfile = ProviderProfile.make({
  parallelCalls: "disable_parallel_tool_use"
})

/**
 * A `LanguageModel` layer over `@anthropic-ai/sdk` (see {@link Options}).
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { AnthropicLanguageModel } from "@rolecraft/anthropic"
 *
 * const ModelLayer = AnthropicLanguageModel.layer({
 *   model: "claude-haiku-4-5",
 *   apiKey: Redacted.make(process.env.ANTHROPIC_API_KEY ?? ""),
 *   timeout: "30 seconds"
 * })
 * ```
 *
 * @category layers
 * @since 0.3.0
 */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))

const defaultModel = "claude-sonnet-4-5"

// A secret this short would garble every message it is redacted from (each occurrence of its characters is hidden).
const minimumKeyLength = 8

const configProblem = (variable: string, problem: string, cause?: unknown) =>
  new ActionError.ValidationError({
    action: "AnthropicLanguageModel.layerConfig",
    message: `AnthropicLanguageModel.layerConfig: ${variable} ${problem}`,
    issues: [{ path: variable, message: problem }],
    ...(cause === undefined ? {} : { cause })
  })

/**
 * A `LanguageModel` layer configured through Effect `Config` (the
 * environment by default, or any `ConfigProvider`):
 *
 * - `ANTHROPIC_API_KEY` (required, read as `Redacted`, at least 8
 *   characters);
 * - `ANTHROPIC_BASE_URL` (optional; default `https://api.anthropic.com`);
 * - `ANTHROPIC_MODEL` (optional; default `claude-sonnet-4-5`). A role's
 *   `spec.model.name` still wins for its llm actions.
 *
 * `options` sets the rest. Fails to build with a `ValidationError` naming the
 * variable when `ANTHROPIC_API_KEY` is unset or shorter than 8 characters;
 * the key itself is never shown.
 *
 * @example
 * ```ts
 * import { AnthropicLanguageModel } from "@rolecraft/anthropic"
 *
 * // ANTHROPIC_API_KEY=sk-ant-... and, optionally, ANTHROPIC_MODEL and ANTHROPIC_BASE_URL
 * const ModelLayer = AnthropicLanguageModel.layerConfig({ timeout: "60 seconds" })
 * ```
 *
 * @category layers
 * @since 0.3.0
 */
export const layerConfig = (
  options?: Omit<Options, "apiKey" | "baseURL" | "model">
): Layer.Layer<LanguageModel.LanguageModel, ActionError.ValidationError> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const apiKey = yield* Config.Redacted("ANTHROPIC_API_KEY").pipe(
        Effect.mapError((error) => configProblem("ANTHROPIC_API_KEY", "is not set (the Anthropic API key)", error))
      )
      if (Redacted.value(apiKey).length < minimumKeyLength) {
        return yield* configProblem(
          "ANTHROPIC_API_KEY",
          `is shorter than ${minimumKeyLength} characters: not an API key`
        )
      }
      const optional = (variable: string) =>
        Config.option(Config.String(variable)).pipe(
          Effect.mapError((error) => configProblem(variable, "cannot be read", error))
        )
      const baseURL = yield* optional("ANTHROPIC_BASE_URL")
      const model = yield* optional("ANTHROPIC_MODEL")
      return layer({
        ...options,
        apiKey,
        ...(Option.isSome(baseURL) ? { baseURL: baseURL.value } : {}),
        model: Option.getOrElse(model, () => defaultModel)
      })
    })
  )
