/**
 * Rolecraft's `LanguageModel` over the official `openai` SDK: the
 * chat completions API of OpenAI or of any OpenAI-compatible endpoint
 * (`baseURL`), built with `LanguageModel.make`.
 *
 * The SDK is constructed with `maxRetries: 0` and an explicit `timeout`, so
 * only the calling action's resilience policy retries; interruption (an
 * attempt timeout included) aborts the HTTP request; SDK errors map to the
 * action error categories (see {@link toActionError}); the API key is a `Redacted` value, scrubbed from
 * every error, and never logged (the SDK's own logger is off).
 *
 * @since 0.1.0
 */
import { ActionError, LanguageModel } from "@rolecraft/core"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai"
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionToolChoiceOption
} from "openai/resources/chat/completions"

/**
 * Options of {@link layer}.
 *
 * - `model`: the default model name, used when a request names none (an llm
 *   action's role without `spec.model.name`). With neither, a call fails with
 *   VALIDATION.
 * - `apiKey`: the API key, sent as `Authorization: Bearer …`. Without it no
 *   credential is sent (keyless local endpoints such as Ollama or llama.cpp).
 * - `baseURL`: the API's base URL; default `https://api.openai.com/v1`.
 * - `timeout`: the SDK's per-request timeout (TIMEOUT when it passes);
 *   default 2 minutes. An action's attempt timeout, usually shorter, aborts
 *   the request first.
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
  readonly organization?: string | undefined
  readonly project?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}

const defaultTimeout = Duration.minutes(2)
const defaultBaseURL = "https://api.openai.com/v1"

// The SDK refuses to start without a credential; a keyless endpoint gets this
// placeholder, and the Authorization header is removed so it is never sent.
const noKey = "rolecraft-no-api-key"

const toWire = (message: LanguageModel.Message): ChatCompletionMessageParam => {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content }
    case "user":
      return { role: "user", content: message.content }
    case "assistant": {
      const calls = message.toolCalls ?? []
      return calls.length === 0
        ? { role: "assistant", content: message.content }
        : {
            role: "assistant",
            content: message.content === "" ? null : message.content,
            tool_calls: calls.map((call) => ({
              id: call.id,
              type: "function",
              function: { name: call.name, arguments: call.arguments }
            }))
          }
    }
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content }
  }
}

const toolChoiceOf = (choice: LanguageModel.ToolChoice): ChatCompletionToolChoiceOption =>
  typeof choice === "string" ? choice : { type: "function", function: { name: choice.tool } }

/**
 * The chat completions request body of a model request (no streaming).
 * `temperature`, `tools` and `tool_choice` are sent only when given.
 *
 * @category wire format
 * @since 0.1.0
 */
export const requestBody = (request: LanguageModel.Request, model: string): ChatCompletionCreateParamsNonStreaming => {
  const tools = request.tools ?? []
  return {
    model,
    messages: request.messages.map(toWire),
    ...(tools.length === 0
      ? {}
      : {
          tools: tools.map((tool) => ({
            type: "function" as const,
            function: {
              name: tool.name,
              description: tool.description,
              parameters: tool.parameters as Record<string, unknown>,
              strict: tool.strict
            }
          }))
        }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.toolChoice === undefined ? {} : { tool_choice: toolChoiceOf(request.toolChoice) })
  }
}

const malformed = (action: string, what: string) =>
  new ActionError.ExecutionFailure({ action, message: `${action}: the model API sent a malformed answer: ${what}` })

/**
 * A wire tool call as the provider's raw call: a `custom` call by its input; any other entry — `type`
 * `"function"`, missing or unknown — by its `function` object's name and arguments, raw (a missing `type`
 * on an otherwise complete call is a function call). Entries that are not objects pass on as they are.
 */
const toolCallOf = (entry: unknown): unknown => {
  if (typeof entry !== "object" || entry === null) return entry
  const call = entry as {
    readonly id?: unknown
    readonly type?: unknown
    readonly function?: unknown
    readonly custom?: unknown
  }
  const body = (call.type === "custom" ? call.custom : call.function) as
    | { readonly name?: unknown; readonly arguments?: unknown; readonly input?: unknown }
    | null
    | undefined
  const inner = typeof body === "object" && body !== null ? body : {}
  return {
    id: call.id,
    name: inner.name,
    arguments: call.type === "custom" ? inner.input : inner.arguments
  }
}

/**
 * A chat completion as a provider response: the first choice's content,
 * refusal and tool calls (the raw `arguments` string kept exactly as sent;
 * arguments a server sent already parsed are turned back into JSON by
 * `LanguageModel.make`, which also decides every other odd field),
 * its finish reason, the model, and the usage (`prompt_tokens`,
 * `completion_tokens`, `total_tokens`; missing counts are 0). A body without
 * a first choice or message is EXECUTION.
 *
 * @category wire format
 * @since 0.1.0
 */
export const responseOf = (
  action: string,
  completion: ChatCompletion
): Effect.Effect<LanguageModel.ProviderResponse, ActionError.ExecutionFailure> => {
  if (typeof completion !== "object" || completion === null || !Array.isArray(completion.choices)) {
    return Effect.fail(malformed(action, "no choices"))
  }
  const choice = completion.choices[0]
  if (choice === undefined || typeof choice.message !== "object" || choice.message === null) {
    return Effect.fail(malformed(action, "no message in the first choice"))
  }
  const message = choice.message
  // Read as sent, not as the SDK's types promise: `LanguageModel.make` decides every odd shape.
  const wireCalls: unknown = message.tool_calls
  const toolCalls = Array.isArray(wireCalls) ? wireCalls.map(toolCallOf) : wireCalls
  return Effect.succeed({
    text: message.content,
    // The one boundary where unchecked wire values enter: `LanguageModel.make` checks each.
    toolCalls: toolCalls as ReadonlyArray<LanguageModel.ToolCall>,
    finishReason: choice.finish_reason,
    model: completion.model,
    refusal: message.refusal,
    usage:
      completion.usage === undefined || completion.usage === null
        ? undefined
        : {
            inputTokens: completion.usage.prompt_tokens,
            outputTokens: completion.usage.completion_tokens,
            totalTokens: completion.usage.total_tokens
          }
  })
}

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

const messageOf = (error: APIError): string => {
  const body: unknown = error.error
  if (typeof body === "object" && body !== null && "message" in body && typeof body.message === "string") {
    return body.message
  }
  return error.message
}

// A base URL as messages show it: without user info, query or fragment (they may hold credentials).
const shownURL = (url: string): string => {
  const parsed = URL.parse(url)
  return parsed === null ? "(an unparsable base URL)" : `${parsed.protocol}//${parsed.host}${parsed.pathname}`
}

// URLs inside a message (fetch quotes the URL it refused) lose their user info, query and fragment.
const withoutURLCredentials = (text: string): string =>
  text
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, "$1")
    .replace(/([a-z][a-z0-9+.-]*:\/\/[^\s?#]*)[?#][^\s)]*/gi, "$1")

/**
 * Maps an SDK failure to an action error:
 *
 * - `APIConnectionTimeoutError` → `Timeout` (`after` = the SDK timeout);
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
export const toActionError = (
  action: string,
  error: unknown,
  options: { readonly timeout: Duration.Duration; readonly nowMs: number; readonly baseURL?: string | undefined }
): ActionError.ActionError => {
  if (error instanceof APIConnectionTimeoutError) {
    return new ActionError.Timeout({
      action,
      after: options.timeout,
      message: `${action}: the model API did not answer within ${Duration.format(options.timeout)}`,
      cause: error
    })
  }
  if (error instanceof APIUserAbortError) {
    return new ActionError.ExecutionFailure({ action, message: `${action}: the model call was aborted`, cause: error })
  }
  if (error instanceof APIConnectionError) {
    const cause: unknown = error.cause
    const detail =
      cause instanceof Error && cause.message !== error.message ? ` (${withoutURLCredentials(cause.message)})` : ""
    const where = options.baseURL === undefined ? "" : ` at ${shownURL(options.baseURL)}`
    return new ActionError.TransientFailure({
      action,
      message: `${action}: could not reach the model API${where}: ${error.message}${detail}`,
      cause: error
    })
  }
  if (error instanceof APIError && typeof error.status === "number") {
    return LanguageModel.httpFailure({
      action,
      status: error.status,
      message: messageOf(error),
      retryAfter: retryAfter(error.headers, options.nowMs)
    })
  }
  if (error instanceof SyntaxError) {
    return new ActionError.ExecutionFailure({
      action,
      message: `${action}: the model API sent a malformed answer: the body is not JSON (${error.message})`,
      cause: error
    })
  }
  return new ActionError.ExecutionFailure({
    action,
    message: `${action}: the model call failed: ${error instanceof Error ? error.message : String(error)}`,
    cause: error
  })
}

/**
 * Makes the service over an SDK client built from `options` (see
 * {@link Options}).
 *
 * Each call sends one `POST {baseURL}/chat/completions` with the request's
 * messages, tools (`type: "function"`, with `name`, `description`,
 * `parameters` and `strict` from `Tool.Tool`), `temperature` and
 * `tool_choice` only when given; the model is the request's, else
 * `options.model`, else the call fails with VALIDATION. Errors: see
 * {@link toActionError}; the API key is scrubbed from all of them.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (options: Options): Effect.Effect<LanguageModel.LanguageModel["Service"]> =>
  Effect.sync(() => {
    const timeout = options.timeout === undefined ? defaultTimeout : Duration.fromInputUnsafe(options.timeout)
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
      logLevel: "off",
      defaultHeaders: { ...options.headers, ...(hasKey ? {} : { Authorization: null }) }
    })
    return LanguageModel.make(
      ({ request, model, action, signal }) => {
        if (model === undefined) {
          return Effect.fail(
            new ActionError.ValidationError({
              action,
              message:
                `${action}: no model named: give OpenAiLanguageModel.layer a model, set OPENAI_MODEL, ` +
                "or set the role's spec.model.name",
              issues: [{ path: "model", message: "no model named" }]
            })
          )
        }
        return Effect.tryPromise({
          try: () => client.chat.completions.create(requestBody(request, model), { signal }),
          catch: (error) => error
        }).pipe(
          Effect.catch((error) =>
            Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
              Effect.fail(toActionError(action, error, { timeout, nowMs, baseURL }))
            )
          ),
          Effect.flatMap((completion) => responseOf(action, completion))
        )
      },
      { name: "openai", model: options.model, secrets: options.apiKey === undefined ? [] : [options.apiKey] }
    )
  })

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
