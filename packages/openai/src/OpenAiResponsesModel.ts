/**
 * Rolecraft's `LanguageModel` over the OpenAI Responses API, through the
 * official `openai` SDK's `responses` client: the API reasoning models keep
 * their reasoning through, across tool calls. Built with
 * `LanguageModel.make`, generating or streaming, with the same options,
 * limits and errors as `OpenAiLanguageModel` (its chat completions
 * sibling).
 *
 * What it sends and reads (see docs/providers.md):
 *
 * - messages as input items: system and user messages, an assistant reply as
 *   its reasoning items, its text and a `function_call` item per tool call,
 *   and each tool result as a `function_call_output`;
 * - `store: false` by default, with the reasoning's encrypted content asked
 *   for (`include: ["reasoning.encrypted_content"]`): each reply's reasoning
 *   items are kept on its assistant message (`providerData`, under this
 *   endpoint's origin `openai.responses <baseURL>`) and sent back with the next request, to this endpoint only. With
 *   `store: true` the server keeps the responses instead, and the next
 *   request names the last one as `previous_response_id`, sending only the
 *   messages after it;
 * - structured output as a `json_schema` text format; a refusal as the
 *   reply's refusal; usage with cached input and reasoning tokens; a
 *   response cut short by `incomplete_details.reason` (`max_output_tokens`
 *   is `"length"`);
 * - errors: an HTTP error as `OpenAiLanguageModel.toActionError` maps it
 *   (429 and 5xx TRANSIENT with `retryAfter`), a `failed` response and an
 *   `error` event in a stream by their code (`server_error` and rate limits
 *   TRANSIENT, others EXECUTION).
 *
 * The API's own tools (web search, file search, code interpreter, hosted
 * MCP) are not offered: their items in a reply are left out.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { OpenAiResponsesModel } from "@rolecraft/openai"
 *
 * const ModelLayer = OpenAiResponsesModel.layer({
 *   model: "gpt-5-mini",
 *   apiKey: Redacted.make(process.env.OPENAI_API_KEY ?? "")
 * })
 * ```
 *
 * @since 0.3.0
 */
import { ActionError, BoundedFetch, LanguageModel, type ModelResponse, ProviderProfile } from "@rolecraft/core"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import OpenAI from "openai"
import type {
  ResponseCreateParamsNonStreaming,
  ResponseCreateParamsStreaming
} from "openai/resources/responses/responses"
import * as Failure from "./internal/failure.ts"
import * as ResponsesRequest from "./internal/responses/request.ts"
import * as ResponsesResponse from "./internal/responses/response.ts"
import * as ResponsesStream from "./internal/responses/stream.ts"
import type { Options as ChatOptions } from "./OpenAiLanguageModel.ts"

/**
 * Options of {@link layer}: those of `OpenAiLanguageModel.Options` (model,
 * API key, base URL, time limits, reply cap, `fetch`, organization, project,
 * headers; the same defaults), and `store` — whether the server keeps each
 * response (default `false`: reasoning goes back as encrypted items).
 *
 * @category models
 * @since 0.3.0
 */
export interface Options extends ChatOptions {
  readonly store?: boolean | undefined
}

const defaultTimeout = Duration.minutes(2)
const defaultMaxReplyCharacters = 1_000_000
const defaultBaseURL = "https://api.openai.com/v1"
const noKey = "rolecraft-no-api-key"

/**
 * Makes the Responses model (see the module's header and {@link Options}).
 * Each call sends one `POST {baseURL}/responses`; the model is the
 * request's, else `options.model`, else the call fails with VALIDATION.
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
    // What this endpoint attaches to a reply (reasoning items, response ids) goes back only here.
    const wire: ResponsesRequest.RequestOptions = {
      origin: `openai.responses ${baseURL}`,
      store: options.store ?? false
    }
    const noModel = (action: string) =>
      new ActionError.ValidationError({
        action,
        message: `${action}: no model named: give OpenAiResponsesModel.layer a model, or set the role's spec.model.name`,
        issues: [{ path: "model", message: "no model named" }]
      })
    const failure = { timeout, baseURL, maxReplyCharacters }
    return LanguageModel.make(
      {
        generate: ({ request, model, action, signal }) => {
          if (model === undefined) return Effect.fail(noModel(action))
          const body = ResponsesRequest.requestBody(
            request,
            model,
            wire,
            false
          ) as unknown as ResponseCreateParamsNonStreaming
          return Effect.tryPromise({
            try: () => client.responses.create(body, { signal }),
            catch: (error) => error
          }).pipe(
            Effect.catch((error) =>
              Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
                Effect.fail(Failure.toActionError(action, error, { ...failure, nowMs }))
              )
            ),
            Effect.flatMap((response) => ResponsesResponse.responseOf(action, response, wire.origin))
          )
        },
        stream: ({ request, model, action, signal }) => {
          if (model === undefined) return Stream.fail(noModel(action))
          const body = ResponsesRequest.requestBody(
            request,
            model,
            wire,
            true
          ) as unknown as ResponseCreateParamsStreaming
          return eventsOf(client, body, action, signal, failure, wire.origin)
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
 * What this layer declares about the Responses API: at most 128 tools in one request, and "no parallel tool
 * calls" sent as `parallel_tool_calls: false`.
 *
 * @category constants
 * @since 0.3.0
 */
export const profile: ProviderProfile.ProviderProfile = ProviderProfile.make({
  toolLimit: 128,
  parallelCalls: "parallel_tool_calls"
})

/** The chunks of one streamed response, read as its events arrive; every failure is an action error. */
async function* eventsOf(
  client: OpenAI,
  body: ResponseCreateParamsStreaming,
  action: string,
  signal: AbortSignal,
  failure: { readonly timeout: Duration.Duration; readonly baseURL: string; readonly maxReplyCharacters: number },
  origin: string
): AsyncIterable<ModelResponse.ProviderChunk> {
  let events: AsyncIterable<unknown>
  try {
    events = await client.responses.create(body, { signal })
  } catch (error) {
    throw Failure.toActionError(action, error, { ...failure, nowMs: Date.now() })
  }
  const read = ResponsesStream.eventReader(action, origin)
  try {
    for await (const event of events) {
      const chunk = read(event)
      if (chunk === undefined) continue
      if (ActionError.isActionError(chunk)) throw chunk
      yield chunk
    }
  } catch (error) {
    throw Failure.streamError(action, error, failure)
  }
}

/**
 * A `LanguageModel` layer over the Responses API (see {@link Options}).
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { OpenAiResponsesModel } from "@rolecraft/openai"
 *
 * const ModelLayer = OpenAiResponsesModel.layer({
 *   model: "gpt-5-mini",
 *   apiKey: Redacted.make(process.env.OPENAI_API_KEY ?? ""),
 *   timeout: "60 seconds"
 * })
 * ```
 *
 * @category layers
 * @since 0.3.0
 */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
