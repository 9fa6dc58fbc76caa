/**
 * Rolecraft's `LanguageModel` over the official `openai` SDK: the chat
 * completions API of OpenAI or of any OpenAI-compatible endpoint
 * (`baseURL`), built with `LanguageModel.make`, generating or streaming.
 *
 * The SDK is constructed with `maxRetries: 0` and an explicit `timeout`, so
 * only the calling action's resilience policy retries; every call is bounded
 * as a whole by that `timeout` (a stream too, to its last chunk), a stream
 * also by an idle limit between chunks, and a reply's size by a cap checked
 * while its body is read; interruption (an attempt timeout included) aborts
 * the HTTP request; SDK errors map to the action error categories (see
 * {@link toActionError}); the API key is a `Redacted` value, scrubbed from
 * every error, and never logged (the SDK's own logger is off).
 *
 * Replies are read in every dialect compatible servers speak (see
 * {@link chunkOf} and {@link responseOf}): content as text or as a list of
 * parts, reasoning in its own field or as thinking parts (kept apart from
 * the text, and sent back where the provider needs it), tool calls with or
 * without `index`, and citations.
 *
 * @example
 * ```ts
 * import { Agent, type Role } from "@rolecraft/core"
 * import { OpenAiLanguageModel } from "@rolecraft/openai"
 * import { Effect, Redacted } from "effect"
 *
 * declare const Guide: Role.Any
 *
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "guide", roles: [Guide] })
 *   return yield* agent.chat("Three things to see in Lisbon?")
 * }).pipe(
 *   Effect.scoped,
 *   // any OpenAI-compatible endpoint; layerConfig() reads OPENAI_API_KEY (and OPENAI_MODEL) instead
 *   Effect.provide(
 *     OpenAiLanguageModel.layer({
 *       model: "llama3.1",
 *       apiKey: Redacted.make("unused"),
 *       baseURL: "http://127.0.0.1:11434/v1",
 *       timeout: "60 seconds"
 *     })
 *   )
 * )
 * ```
 *
 * @since 0.1.0
 */
import { ActionError, BoundedFetch, LanguageModel, type ModelResponse, ProviderProfile } from "@rolecraft/core"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import OpenAI from "openai"
import * as Stream from "effect/Stream"
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming
} from "openai/resources/chat/completions"
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
 * - `apiKey`: the API key, sent as `Authorization: Bearer …`. Without it no
 *   credential is sent (keyless local endpoints such as Ollama or llama.cpp).
 * - `baseURL`: the API's base URL; default `https://api.openai.com/v1`.
 * - `timeout`: the whole call's deadline, from the request to the last
 *   chunk of a stream (TIMEOUT when it passes, the request aborted); default
 *   2 minutes. An action's attempt timeout, usually shorter, aborts the
 *   request first.
 * - `idleTimeout`: how long a stream may send no chunk before the call ends
 *   with TIMEOUT (the request aborted); default 2 minutes. Comments a server
 *   sends to keep the connection open are not chunks.
 * - `maxReplyCharacters`: the cap on one reply's size — its text, reasoning,
 *   refusal and tool-call arguments together; default 1,000,000. Checked as
 *   the reply arrives, and on the HTTP body itself (16 bytes a character, at
 *   least 1 MiB: a non-streamed body as a whole, a stream event by event),
 *   so a huge reply is never held whole; past it the call fails with
 *   EXECUTION naming the cap, the request aborted.
 * - `fetch`: the `fetch` the SDK sends requests with; default the global
 *   `fetch`.
 * - `organization`, `project`: sent as the OpenAI organization and project
 *   headers when given.
 * - `headers`: extra headers sent with every request.
 *
 * The SDK never reads `OPENAI_*` environment variables here: what is not
 * given is not used (use {@link layerConfig} to read them through Config).
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  readonly model?: string | undefined
  readonly apiKey?: Redacted.Redacted<string> | undefined
  readonly baseURL?: string | undefined
  readonly timeout?: Duration.Input | undefined
  readonly idleTimeout?: Duration.Input | undefined
  readonly maxReplyCharacters?: number | undefined
  readonly fetch?: typeof globalThis.fetch | undefined
  readonly organization?: string | undefined
  readonly project?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}

const defaultTimeout = Duration.minutes(2)
const defaultMaxReplyCharacters = 1_000_000
const defaultBaseURL = "https://api.openai.com/v1"

// The SDK refuses to start without a credential; a keyless endpoint gets this
// placeholder, and the Authorization header is removed so it is never sent.
const noKey = "rolecraft-no-api-key"

/**
 * The chat completions request body of a model request (no streaming).
 * `temperature`, `tools`, `tool_choice` and `response_format` (from
 * `responseFormat`, as `json_schema`) are sent only when given.
 *
 * @category wire format
 * @since 0.1.0
 */
export const requestBody: (request: LanguageModel.Request, model: string) => ChatCompletionCreateParamsNonStreaming =
  WireRequest.requestBody
/**
 * A chat completion as a provider response: the first choice's content (a
 * string, or a list of parts: `text` parts are the answer, `thinking` parts
 * reasoning), its reasoning (`reasoning_content` or `reasoning`, with the
 * field it came in), refusal and tool calls (the raw `arguments` string kept
 * exactly as sent; arguments a server sent already parsed are turned back
 * into JSON by `LanguageModel.make`, which also decides every other odd
 * field), its `url_citation` annotations and a top-level `citations` list
 * as citations, its finish reason, the model, and the usage
 * (`prompt_tokens`, `completion_tokens`, `total_tokens`; missing counts are
 * 0; `prompt_tokens_details.cached_tokens` as `cachedInputTokens` and
 * `completion_tokens_details.reasoning_tokens` as `reasoningTokens`, parts of
 * the input and output counts, when sent). A body without a first choice or message is EXECUTION (one that is
 * only `{ error }` is classified as that error).
 *
 * @category wire format
 * @since 0.1.0
 */
export const responseOf: (
  action: string,
  completion: ChatCompletion
) => Effect.Effect<ModelResponse.ProviderResponse, ActionError.ExecutionFailure | ActionError.TransientFailure> =
  WireResponse.responseOf
/**
 * The streaming request body: {@link requestBody} with `stream: true` and
 * `stream_options: { include_usage: true }`, so the last chunk carries the
 * usage.
 *
 * @category wire format
 * @since 0.1.0
 */
export const streamingRequestBody: (
  request: LanguageModel.Request,
  model: string
) => ChatCompletionCreateParamsStreaming = WireRequest.streamingRequestBody

/**
 * One streamed chat completion chunk as a provider chunk: the first
 * choice's `delta` (content as a string or a list of parts, reasoning,
 * refusal, tool-call fragments — with `index`, or without as Mistral sends
 * them — with `id` and `function.name` when this fragment carries them and
 * the next piece of `function.arguments`, and `url_citation` annotations),
 * its `finish_reason`, the model, the usage (a last chunk with
 * `choices: []`, the finishing chunk, or inside its choice) and a top-level
 * `citations` list. A field of the wrong type is EXECUTION naming it (e.g.
 * `choices[0].delta.tool_calls[0].index`).
 *
 * @category wire format
 * @since 0.1.0
 */
export const chunkOf: (
  action: string,
  chunk: ChatCompletionChunk
) => Effect.Effect<ModelResponse.ProviderChunk, ActionError.ExecutionFailure> = WireStream.chunkOf
/**
 * The wait a 429 (or 503) asks for: `retry-after-ms` (milliseconds), else
 * `retry-after` as delta-seconds or an HTTP date (relative to `nowMs`,
 * never negative), read by `LanguageModel.retryAfter` as the webService
 * executor reads them. Malformed values are ignored (`undefined`): the retry
 * policy's backoff applies. Caps are the retry policy's (`maxDelay`).
 *
 * @category wire format
 * @since 0.1.0
 */
export const retryAfter = (headers: Headers | undefined, nowMs: number): Duration.Duration | undefined =>
  LanguageModel.retryAfter(headers, nowMs)

/**
 * Maps an SDK failure to an action error:
 *
 * - `APIConnectionTimeoutError` → `Timeout` (`after` = the SDK timeout);
 * - an error the API sent with a 200 (an error event inside a stream) → by
 *   its `code` when that is an HTTP status, else `TransientFailure` when its
 *   type says the server failed (`server_error`, overloaded, rate limit),
 *   else `ExecutionFailure`;
 * - a body past the reply cap → `ExecutionFailure` naming
 *   `maxReplyCharacters`;
 * - `APIConnectionError` (refused, reset, DNS) → `TransientFailure`, whose
 *   message names `options.baseURL` when given (without user info, query or
 *   fragment);
 * - an HTTP status → `LanguageModel.httpFailure`: 408, 429 (with
 *   `retryAfter` from `retry-after-ms` / `retry-after`) and 5xx
 *   `TransientFailure`; 400, 401, 403, 404, 422 and other 4xx
 *   `ExecutionFailure` with the status and an excerpt of the API's message;
 * - a 2xx body that is not JSON → `ExecutionFailure` ("malformed answer");
 * - anything else (an abort not caused by interruption, another SDK error)
 *   → `ExecutionFailure`.
 *
 * @category wire format
 * @since 0.1.0
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
/**
 * Makes the service over an SDK client built from `options` (see
 * {@link Options}).
 *
 * Each call sends one `POST {baseURL}/chat/completions` (see
 * {@link requestBody}; a stream asks for server-sent events, see
 * {@link streamingRequestBody}) with the request's messages, tools
 * (`type: "function"`, with `name`, `description`, `parameters` and `strict`
 * from `LanguageModel.Tool`), and `temperature`, `tool_choice` and
 * `response_format` only when given; the model is the request's, else
 * `options.model`, else the call fails with VALIDATION. Errors: see
 * {@link toActionError}; the API key is scrubbed from all of them.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (options: Options): Effect.Effect<LanguageModel.LanguageModel["Service"]> =>
  Effect.sync(() => {
    const timeout = options.timeout === undefined ? defaultTimeout : Duration.fromInputUnsafe(options.timeout)
    const maxReplyCharacters = options.maxReplyCharacters ?? defaultMaxReplyCharacters
    const baseURL = options.baseURL ?? defaultBaseURL
    const hasKey = options.apiKey !== undefined && Redacted.value(options.apiKey).length > 0
    const client = new OpenAI({
      apiKey: hasKey && options.apiKey !== undefined ? Redacted.value(options.apiKey) : noKey,
      adminAPIKey: null,
      webhookSecret: null,
      organization: options.organization ?? null,
      project: options.project ?? null,
      baseURL,
      maxRetries: 0,
      timeout: Duration.toMillis(timeout),
      fetch: BoundedFetch.make(options.fetch ?? globalThis.fetch, BoundedFetch.bodyLimitOf(maxReplyCharacters)),
      logLevel: "off",
      defaultHeaders: { ...options.headers, ...(hasKey ? {} : { Authorization: null }) }
    })
    const noModel = (action: string) =>
      new ActionError.ValidationError({
        action,
        message:
          `${action}: no model named: give OpenAiLanguageModel.layer a model, set OPENAI_MODEL, ` +
          "or set the role's spec.model.name",
        issues: [{ path: "model", message: "no model named" }]
      })
    // The endpoint's name on what its provider attaches to a call: sent back only here.
    const origin = `openai.chat ${baseURL}`
    const failure = { timeout, baseURL, maxReplyCharacters }
    const failed = (action: string) => (error: unknown) =>
      Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
        Effect.fail(Failure.toActionError(action, error, { ...failure, nowMs }))
      )
    return LanguageModel.make(
      {
        generate: ({ request, model, action, signal }) => {
          if (model === undefined) return Effect.fail(noModel(action))
          return Effect.tryPromise({
            try: () => client.chat.completions.create(WireRequest.requestBody(request, model, origin), { signal }),
            catch: (error) => error
          }).pipe(
            Effect.catch(failed(action)),
            Effect.flatMap((completion) => WireResponse.responseOf(action, completion, origin))
          )
        },
        stream: ({ request, model, action, signal }) => {
          if (model === undefined) return Stream.fail(noModel(action))
          return chunksOf(
            client,
            WireRequest.streamingRequestBody(request, model, origin),
            action,
            signal,
            failure,
            origin
          )
        }
      },
      {
        name: "openai",
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
 * What this layer declares about the Chat Completions API: at most 128 tools
 * in one request (the API answers 400 "array too long" past it), and "no
 * parallel tool calls" sent as `parallel_tool_calls: false`.
 *
 * @category constants
 * @since 0.3.0
 */
export const profile: ProviderProfile.ProviderProfile = ProviderProfile.make({
  toolLimit: 128,
  parallelCalls: "parallel_tool_calls"
})

/**
 * The chunks of one streamed call, read as they arrive (an async iterable: the core stream reader pulls them,
 * one promise a chunk and no effect); every failure is an action error: the request's by `toActionError`, the
 * stream's by `streamError`, a malformed chunk's EXECUTION.
 */
async function* chunksOf(
  client: OpenAI,
  body: ChatCompletionCreateParamsStreaming,
  action: string,
  signal: AbortSignal,
  failure: { readonly timeout: Duration.Duration; readonly baseURL: string; readonly maxReplyCharacters: number },
  origin: string
): AsyncIterable<ModelResponse.ProviderChunk> {
  let chunks: AsyncIterable<ChatCompletionChunk>
  try {
    chunks = await client.chat.completions.create(body, { signal })
  } catch (error) {
    throw Failure.toActionError(action, error, { ...failure, nowMs: Date.now() })
  }
  try {
    for await (const chunk of chunks) {
      const read = WireStream.readChunk(action, chunk, origin)
      if (read instanceof ActionError.ExecutionFailure) throw read
      yield read
    }
  } catch (error) {
    throw Failure.streamError(action, error, failure)
  }
}

/**
 * A `LanguageModel` layer over the `openai` SDK (see {@link Options}).
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { OpenAiLanguageModel } from "@rolecraft/openai"
 *
 * const ModelLayer = OpenAiLanguageModel.layer({
 *   model: "gpt-4.1-mini",
 *   apiKey: Redacted.make(process.env.OPENAI_API_KEY ?? ""),
 *   timeout: "30 seconds"
 * })
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))

const defaultModel = "gpt-4o-mini"

// A secret this short would garble every message it is redacted from (each occurrence of its characters is hidden).
const minimumKeyLength = 8

const configProblem = (variable: string, problem: string, cause?: unknown) =>
  new ActionError.ValidationError({
    action: "OpenAiLanguageModel.layerConfig",
    message: `OpenAiLanguageModel.layerConfig: ${variable} ${problem}`,
    issues: [{ path: variable, message: problem }],
    ...(cause === undefined ? {} : { cause })
  })

/**
 * A `LanguageModel` layer configured through Effect `Config` (the
 * environment by default, or any `ConfigProvider`):
 *
 * - `OPENAI_API_KEY` (required, read as `Redacted`, at least 8 characters);
 * - `OPENAI_BASE_URL` (optional; default `https://api.openai.com/v1`);
 * - `OPENAI_MODEL` (optional; default `gpt-4o-mini`). A role's
 *   `spec.model.name` still wins for its llm actions. Against another
 *   OpenAI-compatible endpoint, set `OPENAI_MODEL` to one it serves.
 *
 * `options` sets the rest (`timeout`, `organization`, `project`, `headers`).
 *
 * Fails to build with a `ValidationError` (VALIDATION) that names the
 * variable when `OPENAI_API_KEY` is unset, or is shorter than 8 characters
 * (a key that short is surely a mistake, and hiding it would garble every
 * message); the key itself is never shown.
 *
 * @example
 * ```ts
 * import { OpenAiLanguageModel } from "@rolecraft/openai"
 *
 * // OPENAI_API_KEY=sk-... and, optionally, OPENAI_MODEL and OPENAI_BASE_URL
 * const ModelLayer = OpenAiLanguageModel.layerConfig({ timeout: "60 seconds" })
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layerConfig = (
  options?: Omit<Options, "apiKey" | "baseURL" | "model">
): Layer.Layer<LanguageModel.LanguageModel, ActionError.ValidationError> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const apiKey = yield* Config.Redacted("OPENAI_API_KEY").pipe(
        Effect.mapError((error) => configProblem("OPENAI_API_KEY", "is not set (the OpenAI API key)", error))
      )
      if (Redacted.value(apiKey).length < minimumKeyLength) {
        return yield* configProblem(
          "OPENAI_API_KEY",
          `is shorter than ${minimumKeyLength} characters: not an API key (for a keyless endpoint, use OpenAiLanguageModel.layer without apiKey)`
        )
      }
      const optional = (variable: string) =>
        Config.option(Config.String(variable)).pipe(
          Effect.mapError((error) => configProblem(variable, "cannot be read", error))
        )
      const baseURL = yield* optional("OPENAI_BASE_URL")
      const model = yield* optional("OPENAI_MODEL")
      return layer({
        ...options,
        apiKey,
        ...(Option.isSome(baseURL) ? { baseURL: baseURL.value } : {}),
        model: Option.getOrElse(model, () => defaultModel)
      })
    })
  )
