/**
 * An action is a unit of work as a value. Four constructors, one per action type —
 * {@link local}, {@link webService}, {@link llm}, {@link mcpTool} — each
 * returning an immutable, pipeable value; policies are added with dual
 * combinators that return a copy and never mutate.
 *
 * An action has no name of its own: its name is the key under which it sits in
 * a capability or role. It cannot be called except through an agent, which
 * runs every call through the same pipeline (authority, approval, guardrails,
 * conversion, contracts, retrieval, resilience).
 *
 * @example
 * ```ts
 * import { Action } from "@rolecraft/core"
 * import { Schema } from "effect"
 *
 * const book = Action.local({
 *   description: "Book a hotel room",
 *   parameters: { hotelId: Schema.String, checkIn: Schema.String },
 *   run: ({ hotelId, checkIn }) => `booked ${hotelId} from ${checkIn}`
 * }).pipe(
 *   Action.requireApproval({ reason: "Books and charges a hotel" }),
 *   Action.resilience({ retry: { maxAttempts: 3 }, timeout: "10 seconds" })
 * )
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import type * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { dual } from "effect/Function"
import { type Pipeable, pipeArguments } from "effect/Pipeable"
import type { Covariant } from "effect/Types"
import type { ActionError } from "./ActionError.ts"
import type * as ActionResult from "./ActionResult.ts"
import type * as Approval from "./Approval.ts"
import type * as Contract from "./Contract.ts"
import type * as Guardrail from "./Guardrail.ts"
import type * as Knowledge from "./Knowledge.ts"
import type * as KnowledgeBase from "./KnowledgeBase.ts"
import type * as LanguageModel from "./LanguageModel.ts"
import type * as McpClient from "./McpClient.ts"
import type * as Resilience from "./Resilience.ts"

/**
 * The type id carried by every Action value (what {@link isAction} looks for).
 *
 * @category type IDs
 * @since 0.1.0
 */
export const TypeId = "~@rolecraft/core/Action"

/**
 * @category models
 * @since 0.1.0
 */
export type TypeId = typeof TypeId

/**
 * The four action types: `local` (your code), `webService` (one HTTP call),
 * `llm` (one model call) and `mcpTool` (the tools of an MCP server).
 *
 * @category models
 * @since 0.1.0
 */
export type Type = "local" | "webService" | "llm" | "mcpTool"

/**
 * The parameters of an action: an Effect `Schema.Struct`; field order is the
 * declared order (it orders the llm prompt's `Input:` lines and PATH segments).
 *
 * @category models
 * @since 0.1.0
 */
export type ParametersSchema = Schema.Struct<Schema.Struct.Fields>

/**
 * What the constructors accept for `parameters`: a `Schema.Struct` or its
 * fields record.
 *
 * @category models
 * @since 0.1.0
 */
export type ParametersInput = Schema.Struct.Fields | ParametersSchema

/**
 * @category models
 * @since 0.1.0
 */
export type ToStruct<P extends ParametersInput> = P extends ParametersSchema
  ? P
  : P extends Schema.Struct.Fields
    ? Schema.Struct<P>
    : never

/**
 * Phantom types of an action: `A` its result, `R` the services its own
 * effects require (local bodies, result mappers, fallbacks).
 *
 * @category models
 * @since 0.1.0
 */
export interface Variance<out A, out R> {
  readonly _A: Covariant<A>
  readonly _R: Covariant<R>
}

/**
 * What a local action's body, a fallback or a result mapper may return: a
 * value, a Promise or an Effect.
 *
 * @category models
 * @since 0.1.0
 */
export type Returned<A, R> = A | PromiseLike<A> | Effect.Effect<A, unknown, R>

/**
 * The value a {@link Returned} result produces.
 *
 * @category models
 * @since 0.1.0
 */
export type Unwrap<Out> =
  Out extends Effect.Effect<infer A, infer _E, infer _R> ? A : Out extends PromiseLike<infer A> ? A : Out

/**
 * The services a {@link Returned} result requires.
 *
 * @category models
 * @since 0.1.0
 */
export type Requirements<Out> = Out extends Effect.Effect<infer _A, infer _E, infer R> ? R : never

/**
 * What a local action's body receives besides its arguments.
 *
 * - `agentId`, `role`, `action`: who is running it.
 * - `state`: the role's state for this agent (`Role.make`'s `state`), a `Ref`.
 * - `knowledge`: passages retrieved for this call ({@link retrieval}), empty
 *   when the action has no retrieval policy.
 * - `signal`: aborted when the call is interrupted (timeouts included).
 * - `idempotencyKey`: the call's idempotency key when its caller gives one
 *   (a durable run: the run id and the tool call id, the same on every
 *   attempt of the call; see `IdempotencyKey.IdempotencyKey`), else `undefined`. Pass
 *   it to the service that performs a side effect so that a call run twice
 *   takes effect once.
 *
 * @category models
 * @since 0.1.0
 */
export interface Context<S = unknown> {
  readonly agentId: string
  readonly role: string
  readonly action: string
  readonly state: Ref.Ref<S>
  readonly knowledge: ReadonlyArray<Knowledge.Passage>
  readonly signal: AbortSignal
  readonly idempotencyKey?: string | undefined
}

/**
 * A fallback: runs when the action's run still fails after its resilience
 * policy (retries, timeouts), and supplies the result instead.
 *
 * @category models
 * @since 0.1.0
 */
export type Fallback = (args: any, error: ActionError) => unknown

/**
 * A result mapper: turns a dispatched action's `ActionResult` into the value
 * the caller gets (see {@link mapResult}).
 *
 * @category models
 * @since 0.1.0
 */
export type MapResult = (result: ActionResult.ActionResult, args: any) => unknown

/**
 * The policies an action carries. Each is set by its combinator.
 *
 * @category models
 * @since 0.1.0
 */
export interface Policies {
  readonly approval?: Approval.Policy
  readonly resilience?: Resilience.Policy
  readonly fallback?: Fallback
  readonly contract?: Contract.Policy<any, any>
  readonly guardrails?: Guardrail.Policy
  readonly retrieval?: Knowledge.Retrieval<any>
  readonly excludeFromModel?: boolean
  readonly serial?: true | ReadonlyArray<string>
}

interface Base<T extends Type, P extends ParametersSchema, A, R> extends Pipeable {
  readonly [TypeId]: Variance<A, R>
  readonly _tag: T
  readonly description: string
  readonly parameters: P
  readonly success: Schema.Top | undefined
  readonly policies: Policies
}

/**
 * An action whose body is the action: `run(args, context)` may return a
 * value, a Promise or an Effect. An `ActionError` it fails with passes
 * through; any other failure, throw, rejection or defect is EXECUTION.
 *
 * @category models
 * @since 0.1.0
 */
export interface Local<P extends ParametersSchema = ParametersSchema, A = unknown, R = never>
  extends Base<"local", P, A, R> {
  readonly run: (args: P["Type"], context: Context<any>) => unknown
}

/**
 * HTTP methods of a webService action.
 *
 * @category models
 * @since 0.1.0
 */
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD" | "OPTIONS"

/**
 * How a webService action sends its arguments: `QUERY` (query string),
 * `PATH` (`{name}` placeholders) or `BODY` (a JSON body); see {@link webService}.
 *
 * @category models
 * @since 0.1.0
 */
export type ParamType = "QUERY" | "PATH" | "BODY"

/**
 * Authentication of a webService action: none, a bearer token or basic
 * credentials, read from the variable named by `authTokenEnv`.
 *
 * @category models
 * @since 0.1.0
 */
export type AuthType = "NO_AUTH" | "BEARER" | "BASIC"

/**
 * One HTTP call. Fields keep what the caller gave; defaults are
 * applied when the call is made.
 *
 * @category models
 * @since 0.1.0
 */
export interface WebService<P extends ParametersSchema = ParametersSchema, A = unknown, R = never>
  extends Base<"webService", P, A, R> {
  readonly endpoint: string
  readonly method: HttpMethod
  readonly paramType: ParamType | undefined
  readonly auth: AuthType
  readonly authTokenEnv: string | undefined
  readonly headers: Readonly<Record<string, string>>
  readonly timeout: Duration.Input | undefined
  readonly idempotent: boolean
  readonly idempotencyHeader?: string | undefined
  readonly maxResponseBytes: number
  readonly mapResult: MapResult | undefined
}

/**
 * One model call with no tools: the prompt is built from the description and
 * the arguments (see {@link llm}).
 *
 * @category models
 * @since 0.1.0
 */
export interface Llm<P extends ParametersSchema = ParametersSchema, A = unknown, R = never>
  extends Base<"llm", P, A, R> {
  readonly systemPrompt: string | undefined
  readonly temperature: number
  readonly timeout: Duration.Input | undefined
  readonly mapResult: MapResult | undefined
}

/**
 * An MCP server: a stdio command or a streamable HTTP URL.
 *
 * @category models
 * @since 0.1.0
 */
export type McpServer = McpClient.Address

/**
 * The fixed parameters of an mcpTool action: the server's own tool name and
 * that tool's arguments — an object, or a JSON text as models send it (`""`
 * is `{}`; anything that is not a JSON object is VALIDATION); absent is `{}`.
 * The arguments are then converted against the tool's own input schema.
 *
 * @category schemas
 * @since 0.1.0
 */
export const McpToolParameters = Schema.Struct({
  tool: Schema.String,
  arguments: Schema.optionalKey(Schema.Union([Schema.Record(Schema.String, Schema.Unknown), Schema.String]))
})

/**
 * @category models
 * @since 0.1.0
 */
export type McpToolParameters = typeof McpToolParameters

/**
 * The tools of one MCP server, called by name (see {@link mcpTool}).
 *
 * @category models
 * @since 0.1.0
 */
export interface McpTool<A = unknown, R = never> extends Base<"mcpTool", McpToolParameters, A, R> {
  readonly server: McpServer
  readonly apiKeyEnv: string | undefined
  readonly tools: ReadonlyArray<string> | undefined
  readonly timeout: Duration.Input | undefined
  readonly idempotent: boolean
  readonly mapResult: MapResult | undefined
}

/**
 * Any action.
 *
 * @category models
 * @since 0.1.0
 */
export type Action<P extends ParametersSchema = ParametersSchema, A = unknown, R = never> =
  | Local<P, A, R>
  | WebService<P, A, R>
  | Llm<P, A, R>
  | McpTool<A, R>

/**
 * Any action, whatever its types.
 *
 * @category models
 * @since 0.1.0
 */
export type Any = Local<any, any, any> | WebService<any, any, any> | Llm<any, any, any> | McpTool<any, any>

/**
 * An action whose work Rolecraft does (webService, llm, mcpTool), as opposed
 * to a local action whose body is your code: the only kind a capability may
 * hold.
 *
 * @category models
 * @since 0.1.0
 */
export type Dispatched = WebService<any, any, any> | Llm<any, any, any> | McpTool<any, any>

/**
 * The decoded arguments of an action.
 *
 * @category models
 * @since 0.1.0
 */
export type Parameters<X extends Any> = X["parameters"]["Type"]

/**
 * The result type of an action.
 *
 * @category models
 * @since 0.1.0
 */
export type Success<X extends Any> = X[TypeId] extends Variance<infer A, infer _R> ? A : never

/**
 * The services an action's own effects require.
 *
 * @category models
 * @since 0.1.0
 */
export type Services<X extends Any> = X[TypeId] extends Variance<infer _A, infer R> ? R : never

/**
 * The same action with other phantom result and requirement types.
 *
 * @category models
 * @since 0.1.0
 */
export type Retype<X extends Any, A, R> = { readonly [K in keyof X]: K extends TypeId ? Variance<A, R> : X[K] }

/**
 * Whether a value is an action.
 *
 * @category guards
 * @since 0.1.0
 */
export const isAction = (u: unknown): u is Any => typeof u === "object" && u !== null && TypeId in u

const variance: Variance<never, never> = { _A: (_: never) => _, _R: (_: never) => _ }

const Proto = {
  [TypeId]: variance,
  pipe() {
    return pipeArguments(this, arguments)
  },
  toJSON(this: Any) {
    return { _id: "Action", _tag: this._tag, description: this.description }
  }
}

const make = <X extends Any>(fields: Omit<X, TypeId | "pipe">): X => Object.assign(Object.create(Proto), fields)

const copy = <X extends Any>(self: X, fields: Partial<Omit<X, TypeId | "pipe" | "_tag">>): X =>
  Object.assign(Object.create(Proto), self, fields)

const toStruct = (parameters: ParametersInput): ParametersSchema =>
  Schema.isSchema(parameters) ? (parameters as ParametersSchema) : Schema.Struct(parameters)

/**
 * A local action: your code is the action.
 *
 * - `parameters`: a `Schema.Struct` or its fields; arguments are converted
 *   to it before `run` sees them (a string `"3"` for a number field
 *   becomes `3`; what cannot be converted is VALIDATION).
 * - `success`: optional schema of the result (typing and the model's view).
 * - `run(args, context)`: returns a value, a Promise or an Effect. Its
 *   Effect's requirements become the action's `R`, carried to the agent.
 *
 * Errors at call time: an `ActionError` the body fails with passes through;
 * a throw, rejection, other failure or defect is `ExecutionFailure`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Action } from "@rolecraft/core"
 *
 * const nights = Action.local({
 *   description: "Count the nights between two dates",
 *   parameters: { checkIn: Schema.String, checkOut: Schema.String },
 *   run: ({ checkIn, checkOut }) => (Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const local = <const P extends ParametersInput, Out, S = unknown>(options: {
  readonly description: string
  readonly parameters: P
  readonly success?: Schema.Top | undefined
  readonly run: (args: ToStruct<P>["Type"], context: Context<S>) => Out
}): Local<ToStruct<P>, Unwrap<Out>, Requirements<Out>> =>
  make<Local<ToStruct<P>, Unwrap<Out>, Requirements<Out>>>({
    _tag: "local",
    description: options.description,
    parameters: toStruct(options.parameters) as ToStruct<P>,
    success: options.success,
    policies: {},
    run: options.run as Local["run"]
  })

type SuccessOf<S> = S extends Schema.Top ? S["Type"] : unknown

/**
 * A webService action: one HTTP call described by its options, made over
 * Effect's `HttpClient`.
 *
 * - `endpoint`: an absolute http(s) URL, or a path starting with `/` for a
 *   client that resolves it. `{name}` placeholders fill path segments and
 *   query values with that argument, encoded (`encodeURIComponent`) so it
 *   stays inside its segment or value. A placeholder in the scheme, host,
 *   port or fragment, or naming no parameter, is VALIDATION; so is a value
 *   that would make a path segment empty, `.` or `..`.
 * - `method`: default `"GET"`.
 * - `paramType`: `"QUERY"`, `"PATH"` or `"BODY"`; default `"BODY"` for POST,
 *   PUT and PATCH, `"QUERY"` otherwise. It sends every argument, placeholder
 *   ones included, in declared order: QUERY as `key=value` pairs (an array as
 *   repeated keys, `[]` omits the key, `null` elements are dropped), PATH as
 *   one encoded segment per value, BODY as one JSON object
 *   (`content-type: application/json`; not allowed on GET or HEAD). `null`
 *   and absent values are left out of QUERY and PATH; objects there are
 *   VALIDATION naming the field.
 * - `auth`: `"NO_AUTH"` (default), `"BEARER"` or `"BASIC"` (the secret is
 *   `user:password`); `authTokenEnv` names the variable holding the secret,
 *   read at call time through `Config` (an unset variable is VALIDATION
 *   naming it). Secrets never appear in errors or logs.
 * - `headers`: fixed headers. `timeout`: per attempt, default 30 seconds; it
 *   covers reading the body, and aborts the request (TIMEOUT).
 * - `idempotent`: default `false`; `true` allows retrying a failure whose
 *   outcome is unknown on a POST or PATCH (GET, HEAD, PUT, DELETE and
 *   OPTIONS are idempotent already).
 * - `idempotencyHeader`: the header that carries the call's idempotency key
 *   (`IdempotencyKey.IdempotencyKey`: in a durable run, the run id and the tool call
 *   id, the same on every attempt), e.g. `"Idempotency-Key"`; sent only
 *   when the call has a key. Default: none. For a service that deduplicates
 *   requests by that header, so a call run again after a crash takes effect
 *   once (set `idempotent: true` too to let a POST be retried).
 * - `maxResponseBytes`: the largest body read, counted after decoding
 *   (default 10 MiB): a larger `Content-Length` is refused before reading,
 *   and a body is counted as it streams and the read stops at the cap
 *   (EXECUTION naming it). A `gzip`, `deflate` or `br` body is decoded on
 *   every HTTP client; another encoding is EXECUTION naming it. An error
 *   body is read only as far as its excerpt needs (64 KiB).
 * - `success`: optional schema the result is decoded with (mismatch →
 *   VALIDATION naming each path).
 *
 * The result: a 2xx JSON body (by content type) parsed (a body that is not
 * JSON is EXECUTION with an excerpt), other text decoded by its charset,
 * other content as a `Uint8Array`, and `null` for 204/205 or an empty body. Errors: 408, 429, 5xx and connection failures are TRANSIENT
 * (`status`, `retryAfter` from `Retry-After`/`retry-after-ms`); other 4xx
 * (and an unfollowed 3xx) are EXECUTION with `status` and a short `excerpt`.
 * A failure after the request may have reached the server (a dropped
 * connection, a 5xx, an attempt timeout) is not retried unless the method
 * is idempotent or `idempotent` is `true`; failures before sending
 * (connection refused, DNS) and 408/429/503-with-Retry-After always are.
 *
 * Requires `HttpClient`: the action's `R` holds it, and so does that of an
 * agent whose roles hold the action, so a program that runs it without an
 * `HttpClient` layer does not compile. Provide e.g.
 * `NodeHttpClient.layerUndici` from `@effect/platform-node`, or
 * `HttpRoutes.layer` from `@rolecraft/testing` in tests.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Action } from "@rolecraft/core"
 *
 * const forecast = Action.webService({
 *   description: "Get the forecast for a city",
 *   parameters: { city: Schema.String },
 *   endpoint: "https://api.example.com/v1/forecast",
 *   paramType: "PATH",
 *   auth: "BEARER",
 *   authTokenEnv: "WEATHER_API_KEY",
 *   headers: { Accept: "application/json" },
 *   timeout: 5000
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const webService = <const P extends ParametersInput, S extends Schema.Top | undefined = undefined>(options: {
  readonly description: string
  readonly parameters: P
  readonly endpoint: string
  readonly method?: HttpMethod | undefined
  readonly paramType?: ParamType | undefined
  readonly auth?: AuthType | undefined
  readonly authTokenEnv?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly timeout?: Duration.Input | undefined
  readonly idempotent?: boolean | undefined
  readonly idempotencyHeader?: string | undefined
  readonly maxResponseBytes?: number | undefined
  readonly success?: S
}): Unmapped<WebService<ToStruct<P>, SuccessOf<S>, HttpClient.HttpClient>> =>
  make<Unmapped<WebService<ToStruct<P>, SuccessOf<S>, HttpClient.HttpClient>>>({
    _tag: "webService",
    description: options.description,
    parameters: toStruct(options.parameters) as ToStruct<P>,
    success: options.success,
    policies: {},
    endpoint: options.endpoint,
    method: options.method ?? "GET",
    paramType: options.paramType,
    auth: options.auth ?? "NO_AUTH",
    authTokenEnv: options.authTokenEnv,
    headers: options.headers ?? {},
    timeout: options.timeout,
    idempotent: options.idempotent ?? false,
    ...(options.idempotencyHeader === undefined ? {} : { idempotencyHeader: options.idempotencyHeader }),
    maxResponseBytes: options.maxResponseBytes ?? 10 * 1024 * 1024,
    mapResult: undefined
  })

/**
 * An llm action: one call to the agent's model, with no tools. The prompt is the description, then retrieved
 * knowledge, then an `Input:` block with one `name: value` line per argument.
 *
 * - `systemPrompt`: the system message for this action only.
 * - `temperature`: applies when `>= 0`; `-1` (default) keeps the client's.
 * - `timeout`: per attempt.
 * - `success`: the reply is decoded as JSON against it; without it the
 *   reply text is the result.
 *
 * Requires `LanguageModel` (in its `R`): the model in context, or the
 * agent's own (`Agent.make({ model })`), which the agent then provides
 * itself.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Action } from "@rolecraft/core"
 *
 * const packingTip = Action.llm({
 *   description: "Write a two-sentence packing tip for the trip",
 *   parameters: { destination: Schema.String, month: Schema.String },
 *   temperature: 0.3
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const llm = <const P extends ParametersInput, S extends Schema.Top | undefined = undefined>(options: {
  readonly description: string
  readonly parameters: P
  readonly success?: S
  readonly systemPrompt?: string | undefined
  readonly temperature?: number | undefined
  readonly timeout?: Duration.Input | undefined
}): Unmapped<Llm<ToStruct<P>, S extends Schema.Top ? S["Type"] : string, LanguageModel.LanguageModel>> =>
  make<Unmapped<Llm<ToStruct<P>, S extends Schema.Top ? S["Type"] : string, LanguageModel.LanguageModel>>>({
    _tag: "llm",
    description: options.description,
    parameters: toStruct(options.parameters) as ToStruct<P>,
    success: options.success,
    policies: {},
    systemPrompt: options.systemPrompt,
    temperature: options.temperature ?? -1,
    timeout: options.timeout,
    mapResult: undefined
  })

/**
 * An mcpTool action: the tools of one MCP server. Its parameters are fixed: `{ tool, arguments }`, `tool` being
 * the server's own tool name.
 *
 * - `server`: a stdio command `{ command, args, env, cwd }` or a streamable
 *   HTTP URL.
 * - `apiKeyEnv`: the variable sent as the server's credential.
 * - `tools`: an allow-list of tool names (default: all); a tool outside it
 *   is NOT_FOUND.
 * - `timeout`: per attempt (default 60 seconds), passed to the MCP request
 *   itself: when it passes the request is cancelled on the server (TIMEOUT).
 *   Opening the connection (spawn and `initialize`, on the first call or
 *   after a crash) is bounded by the client's own connect timeout instead
 *   (`McpClientSdk` default 30 seconds).
 * - `idempotent`: allows retrying a failure whose outcome is unknown (the
 *   server exited or the transport broke after the request was sent).
 *
 * A direct call is `agent.executeAction(key, { tool, arguments })`, `tool`
 * being the server's own tool name; the result is the tool's valid
 * `structuredContent`, else its text, else its content parts
 * (`McpContent.toValue`). Authority sees both `key` and `key/tool`.
 *
 * Requires `McpClient` (in its `R`), e.g. `McpClientSdk.layer` from
 * `@rolecraft/mcp`.
 *
 * @example
 * ```ts
 * import { Action } from "@rolecraft/core"
 *
 * const currencyTools = Action.mcpTool({
 *   description: "Currency tools",
 *   server: "https://mcp.example.com/mcp",
 *   apiKeyEnv: "FX_API_KEY",
 *   timeout: "10 seconds"
 * })
 * // agent.executeAction("currencyTools", { tool: "convert", arguments: { from: "EUR", to: "USD", amount: 5 } })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const mcpTool = (options: {
  readonly description: string
  readonly server: McpServer
  readonly apiKeyEnv?: string | undefined
  readonly tools?: ReadonlyArray<string> | undefined
  readonly timeout?: Duration.Input | undefined
  readonly idempotent?: boolean | undefined
}): Unmapped<McpTool<unknown, McpClient.McpClient>> =>
  make<Unmapped<McpTool<unknown, McpClient.McpClient>>>({
    _tag: "mcpTool",
    description: options.description,
    parameters: McpToolParameters,
    success: undefined,
    policies: {},
    server: options.server,
    apiKeyEnv: options.apiKeyEnv,
    tools: options.tools,
    timeout: options.timeout,
    idempotent: options.idempotent ?? false,
    mapResult: undefined
  })

const withPolicy = <X extends Any>(self: X, policies: Policies): X =>
  copy<Any>(self, { policies: { ...self.policies, ...policies } }) as X

/**
 * Post-processes the result of a webService, llm or mcpTool action, given as
 * an `ActionResult` (text, JSON, bytes, with `asJson`, `decode`…). `f(result, args)` may return
 * a value, a Promise, an Effect, or an `ActionResult` (then its value is the
 * result). It runs together with the executor as one unit inside resilience,
 * so a failing mapper is retried with the call. A throw or failure that is
 * not an `ActionError` is EXECUTION.
 *
 * A capability may not hold a mapped action (capabilities are pure
 * dispatch; the compiler and `Capability.make` both refuse it): put it on the
 * role.
 *
 * @category combinators
 * @since 0.1.0
 */
export const mapResult: {
  <X extends Dispatched, Out>(
    f: (result: ActionResult.ActionResult, args: Parameters<X>) => Out
  ): (self: X) => Mapped<X, Out>
  <X extends Dispatched, Out>(
    self: X,
    f: (result: ActionResult.ActionResult, args: Parameters<X>) => Out
  ): Mapped<X, Out>
} = dual(2, (self: Dispatched, f: MapResult) => copy<Dispatched>(self, { mapResult: f }))

/**
 * An action with a result mapper: its result type follows the mapper's.
 *
 * @category models
 * @since 0.1.0
 */
export type Mapped<X extends Dispatched, Out> = {
  readonly [K in keyof X]: K extends TypeId
    ? Variance<Unwrap<Out> extends ActionResult.ActionResult ? unknown : Unwrap<Out>, Services<X> | Requirements<Out>>
    : K extends "mapResult"
      ? MapResult
      : X[K]
}

/**
 * A dispatched action as its constructor makes it: without a result mapper,
 * so a capability may hold it.
 *
 * @category models
 * @since 0.1.0
 */
export type Unmapped<X extends Dispatched> = X & { readonly mapResult: undefined }

/**
 * Marks an action as one that runs alone in a chat turn: when a model's
 * reply holds several calls, a call of this action waits for the calls
 * before it to finish, and the calls after it wait for it — the calls run in
 * the order the model gave them, the others of the reply still side by side
 * (up to the turn's `concurrency`). For an mcpTool action, `tools` names the
 * server's tools that run alone (default: every tool of the action).
 * Answers are written in the calls' order either way.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Action } from "@rolecraft/core"
 *
 * const write = Action.local({
 *   description: "Write a file",
 *   parameters: { path: Schema.String, text: Schema.String },
 *   run: ({ path }) => `wrote ${path}`
 * }).pipe(Action.serial())
 * ```
 *
 * @category combinators
 * @since 0.3.0
 */
export const serial: {
  (options?: { readonly tools?: ReadonlyArray<string> | undefined }): <X extends Any>(self: X) => X
  <X extends Any>(self: X, options?: { readonly tools?: ReadonlyArray<string> | undefined }): X
} = dual(
  (args) => isAction(args[0]),
  (self: Any, options?: { readonly tools?: ReadonlyArray<string> | undefined }) =>
    withPolicy(self, { serial: options?.tools ?? true })
)

/**
 * Requires an approved token for every call: without one the call fails with
 * APPROVAL and a pending token is requested for an approver. `reason` is shown to approvers; `ttl` bounds how long
 * a requested token stays valid (default 15 minutes).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Action } from "@rolecraft/core"
 *
 * const book = Action.webService({
 *   description: "Book a room",
 *   parameters: { hotelId: Schema.String, nights: Schema.Number },
 *   endpoint: "https://api.example.com/v1/bookings",
 *   method: "POST"
 * }).pipe(Action.requireApproval({ reason: "Charges the card", ttl: "10 minutes" }))
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const requireApproval: {
  (options: Approval.Policy): <X extends Any>(self: X) => X
  <X extends Any>(self: X, options: Approval.Policy): X
} = dual(2, (self: Any, options: Approval.Policy) => withPolicy(self, { approval: options }))

/**
 * Sets the resilience policy of the action's run: retry with
 * backoff, attempt timeout, whole-step deadline, circuit breaker, bulkhead.
 * See `Resilience.Policy` for every option and default.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Action } from "@rolecraft/core"
 *
 * const forecast = Action.webService({
 *   description: "Forecast for a city",
 *   parameters: { city: Schema.String },
 *   endpoint: "https://api.example.com/v1/forecast/{city}"
 * }).pipe(
 *   Action.resilience({
 *     retry: { maxAttempts: 3, initialDelay: "200 millis" },
 *     timeout: "10 seconds",
 *     circuitBreaker: { failureRateThreshold: 0.5, resetAfter: "30 seconds" }
 *   })
 * )
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const resilience: {
  (options: Resilience.Policy): <X extends Any>(self: X) => X
  <X extends Any>(self: X, options: Resilience.Policy): X
} = dual(2, (self: Any, options: Resilience.Policy) => withPolicy(self, { resilience: options }))

/**
 * Sets the fallback: when the action's run still fails
 * after resilience, `f(args, error)` supplies the result. It may return a
 * value, a Promise or an Effect. It does not run for failures of other
 * steps. If it fails too, the call fails with EXECUTION carrying both causes.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Action } from "@rolecraft/core"
 *
 * const sky = Action.webService({
 *   description: "Current sky for a city",
 *   parameters: { city: Schema.String },
 *   endpoint: "https://api.example.com/v1/sky/{city}"
 * }).pipe(Action.fallback(({ city }: { city: string }, error) => ({ city, sky: "unknown", because: error.category })))
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const fallback: {
  <X extends Any, Out>(f: (args: Parameters<X>, error: ActionError) => Out): (self: X) => WithFallback<X, Out>
  <X extends Any, Out>(self: X, f: (args: Parameters<X>, error: ActionError) => Out): WithFallback<X, Out>
} = dual(2, (self: Any, f: Fallback) => withPolicy(self, { fallback: f }))

/**
 * An action with a fallback: its result is the action's or the fallback's.
 *
 * @category models
 * @since 0.1.0
 */
export type WithFallback<X extends Any, Out> = Retype<X, Success<X> | Unwrap<Out>, Services<X> | Requirements<Out>>

/**
 * Sets pre- and postconditions and invariants: checked before the run
 * (preconditions, invariants) and after it (postconditions), each failure a
 * CONTRACT error. See `Contract.Policy`.
 *
 * @category combinators
 * @since 0.1.0
 */
export const contract: {
  <X extends Any, S = unknown>(options: Contract.Policy<Parameters<X>, Success<X>, S>): (self: X) => X
  <X extends Any, S = unknown>(self: X, options: Contract.Policy<Parameters<X>, Success<X>, S>): X
} = dual(2, (self: Any, options: Contract.Policy<any, any>) => withPolicy(self, { contract: options }))

/**
 * Sets the action's own input and output guardrails; they replace the role's
 * default (no merge). See `Guardrail.Policy`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Action } from "@rolecraft/core"
 *
 * const search = Action.llm({
 *   description: "Answer a travel question",
 *   parameters: { question: Schema.String }
 * }).pipe(Action.guardrails({ input: { maxLength: 500, blockedPatterns: [/\b\d{13,16}\b/] } }))
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const guardrails: {
  (options: Guardrail.Policy): <X extends Any>(self: X) => X
  <X extends Any>(self: X, options: Guardrail.Policy): X
} = dual(2, (self: Any, options: Guardrail.Policy) => withPolicy(self, { guardrails: options }))

/**
 * Retrieves knowledge before the run: `topK` passages
 * (default 5) for `query(args)` (default: the string arguments joined) from
 * the role's knowledge sources. The action then requires `KnowledgeBase`
 * (in its `R`): `KnowledgeBase.layer` searches file and directory sources.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Action } from "@rolecraft/core"
 *
 * const answer = Action.llm({
 *   description: "Answer from the refund policy",
 *   parameters: { question: Schema.String }
 * }).pipe(Action.retrieval({ topK: 3, query: ({ question }: { question: string }) => question }))
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const retrieval: {
  <X extends Any>(options: Knowledge.Retrieval<Parameters<X>>): (self: X) => WithRetrieval<X>
  <X extends Any>(self: X, options: Knowledge.Retrieval<Parameters<X>>): WithRetrieval<X>
} = dual(2, (self: Any, options: Knowledge.Retrieval<any>) => withPolicy(self, { retrieval: options }))

/**
 * An action with a retrieval policy: it also requires `KnowledgeBase`.
 *
 * @category models
 * @since 0.3.0
 */
export type WithRetrieval<X extends Any> = Retype<X, Success<X>, Services<X> | KnowledgeBase.KnowledgeBase>

/**
 * Keeps the action out of the tools offered to a model in chat turns; it can
 * still be called with `executeAction`.
 *
 * @category combinators
 * @since 0.1.0
 */
export const excludeFromModel = <X extends Any>(self: X): X => withPolicy(self, { excludeFromModel: true })
