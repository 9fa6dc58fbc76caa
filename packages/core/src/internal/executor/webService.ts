/**
 * The webService executor: one HTTP call
 * over Effect's `HttpClient`, read optionally from the context (missing →
 * VALIDATION inside the run step, so a fallback still runs).
 *
 * Request: the endpoint and arguments as `endpoint.ts` builds them; the
 * action's fixed `headers`; `auth` BEARER (`Authorization: Bearer <secret>`)
 * or BASIC (the secret is `user:password`) with the secret read at call time
 * through `Config.Redacted(authTokenEnv)`.
 *
 * Response, classified by status before any body parsing:
 * - 2xx: 204/205 or an empty body → `null` whatever the content type; JSON
 *   (`application/json`, `text/json`, `*+json`) parsed — a non-empty body
 *   that is not JSON is EXECUTION with an excerpt; other text (`text/*`,
 *   XML, JavaScript, form data, anything with a charset, or no content type)
 *   decoded by its charset; anything else is returned as bytes
 *   (`Uint8Array`). A byte-order mark wins over the declared charset; an
 *   unknown charset label falls back to UTF-8 with a logged warning. With a
 *   `success` schema the value is decoded with it (mismatch → VALIDATION).
 * - 408, 429, 5xx → TRANSIENT with `status` and `retryAfter`.
 * - any other status (other 4xx, an unfollowed 3xx) → EXECUTION with
 *   `status` and an excerpt of at most 1,000 characters (HTML reduced to its
 *   `<title>` or its text).
 *
 * Retry safety: a failure after the request may have reached the
 * server — a broken connection after connecting, a body that breaks off, a
 * 5xx — carries `outcomeUnknown: true` and is retryable only when the method
 * is idempotent (GET, HEAD, PUT, DELETE, OPTIONS) or the action says
 * `idempotent: true`. Failures known to happen before anything was sent
 * (connection refused, DNS, unreachable network, connect timeout, TLS) and
 * the server's explicit "not processed" answers (408, 429, and 503 with a
 * `Retry-After`) are always retryable.
 *
 * Every error passes through `redact.scrub` with the secret read.
 */
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Zlib from "node:zlib"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as Action from "../../Action.ts"
import { type ActionError, ExecutionFailure, type Issue, TransientFailure, ValidationError } from "../../ActionError.ts"
import * as ActionResult from "../../ActionResult.ts"
import * as Endpoint from "./endpoint.ts"
import * as Redact from "../redact.ts"
import * as TimeLimit from "../run/timeLimit.ts"
import { shorten } from "../text.ts"
import * as Json from "../json.ts"
import * as HttpResponse from "./httpResponse.ts"

type WebService = Action.WebService<any, any, any>

/**
 * Where the arguments go: the action's `paramType`, else BODY for POST, PUT
 * and PATCH and QUERY for the other methods.
 */
export const paramTypeOf = (action: WebService): Endpoint.ParamType =>
  action.paramType ??
  (action.method === "POST" || action.method === "PUT" || action.method === "PATCH" ? "BODY" : "QUERY")

/**
 * The longest `retryAfter` recorded. A server asking for more is recorded as
 * this much, which is still beyond any sensible retry policy's `maxDelay`,
 * so the policy fails at once instead of sleeping (see
 * `Resilience.schedule`).
 */
export const maxRetryAfter = Duration.hours(1)

const excerptLength = 1000
const messageExcerptLength = 200

// What does not change between calls of one action: checked once.
interface Plan {
  readonly template: Endpoint.Template
  readonly fields: ReadonlyArray<string>
  readonly paramType: Endpoint.ParamType
  readonly safe: boolean
}

const plans = new WeakMap<WebService, Result.Result<Plan, Array<Issue>>>()

const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const headerValue = /^[\t\x20-\x7e\x80-\xff]*$/

const planOf = (action: WebService): Result.Result<Plan, Array<Issue>> => {
  const cached = plans.get(action)
  if (cached !== undefined) return cached
  const fields = Object.keys(action.parameters.fields)
  const paramType = paramTypeOf(action)
  const issues: Array<Issue> = []
  const template = Endpoint.parse(action.endpoint, fields)
  if (Result.isFailure(template)) issues.push(...template.failure)
  if (paramType === "BODY" && (action.method === "GET" || action.method === "HEAD")) {
    issues.push({ path: "paramType", message: `a ${action.method} request carries no body: use QUERY or PATH` })
  }
  if ((action.auth === "BEARER" || action.auth === "BASIC") && action.authTokenEnv === undefined) {
    issues.push({
      path: "authTokenEnv",
      message: `auth ${action.auth} needs authTokenEnv, the environment variable holding the secret`
    })
  }
  for (const [key, value] of Object.entries(action.headers)) {
    if (!headerName.test(key)) issues.push({ path: `headers.${key}`, message: "is not a valid header name" })
    else if (!headerValue.test(value)) issues.push({ path: `headers.${key}`, message: "is not a valid header value" })
  }
  const plan: Result.Result<Plan, Array<Issue>> = issues.length > 0 || Result.isFailure(template)
    ? Result.fail(issues)
    : Result.succeed({ template: template.success, fields, paramType, safe: Endpoint.isSafeToRepeat(action) })
  plans.set(action, plan)
  return plan
}

const invalid = (name: string, what: string, issues: ReadonlyArray<Issue>): ValidationError =>
  new ValidationError({
    action: name,
    message: `${name}: ${what}: ${issues.map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`)).join("; ")}`,
    issues
  })

const notProvided = (name: string): ValidationError =>
  new ValidationError({
    action: name,
    message: `${name}: HttpClient not provided: provide an HttpClient layer (e.g. NodeHttpClient.layerUndici from @effect/platform-node)`,
    issues: [{ path: "", message: "HttpClient not provided" }]
  })

// The secrets of one call: the secret itself and, for BASIC, the password alone (when 4+ characters).
interface Credentials {
  readonly secret: Redacted.Redacted<string> | undefined
  readonly secrets: ReadonlyArray<Redacted.Redacted<string>>
}

const none: Credentials = { secret: undefined, secrets: [] }

const credentialsOf = (name: string, action: WebService): Effect.Effect<Credentials, ValidationError> => {
  const variable = action.authTokenEnv
  if (action.auth === "NO_AUTH" || variable === undefined) return Effect.succeed(none)
  return Config.Redacted(variable).pipe(
    Effect.mapError(() =>
      invalid(name, "missing secret", [
        { path: "authTokenEnv", message: `the environment variable ${variable} (the ${action.auth} secret) is not set` }
      ])
    ),
    Effect.flatMap((secret) => {
      const text = Redacted.value(secret)
      const colon = text.indexOf(":")
      const password = colon < 0 ? "" : text.slice(colon + 1)
      // The password alone is redacted too, unless so short that hiding it would garble every message.
      const secrets = password.length >= 4 ? [secret, Redacted.make(password)] : [secret]
      const fault =
        action.auth === "BASIC" && colon < 0
          ? `the value of ${variable} is not of the form user:password`
          : action.auth === "BEARER" && !headerValue.test(text)
            ? `the value of ${variable} cannot be sent in a header (it holds a control character or one beyond Latin-1)`
            : text.length < Redact.minimumSecretLength
              ? `the value of ${variable} is shorter than ${Redact.minimumSecretLength} characters`
              : undefined
      return fault === undefined
        ? Effect.succeed({ secret, secrets })
        : Effect.fail(Redact.scrub(invalid(name, "bad secret", [{ path: "authTokenEnv", message: fault }]), secrets))
    })
  )
}

/**
 * The secrets a call of `action` holds, for redacting what runs around it
 * (its fallback, its role's hooks): none when the secret is unset or refused.
 */
export const secretsOf = (action: WebService): Effect.Effect<ReadonlyArray<Redacted.Redacted<string>>> =>
  credentialsOf("", action).pipe(
    Effect.map((credentials) => credentials.secrets),
    Effect.orElseSucceed(() => [])
  )

const authorize = (
  request: HttpClientRequest.HttpClientRequest,
  auth: Action.AuthType,
  secret: Redacted.Redacted<string> | undefined
): HttpClientRequest.HttpClientRequest => {
  if (secret === undefined) return request
  if (auth === "BEARER") return HttpClientRequest.bearerToken(request, secret)
  const text = Redacted.value(secret)
  const colon = text.indexOf(":")
  return HttpClientRequest.basicAuth(request, text.slice(0, colon), text.slice(colon + 1))
}

// What the response handling needs to know about the call.
interface Call {
  readonly name: string
  readonly action: WebService
  readonly method: string
  /** The URL called; messages show it without its query and fragment (`targetOf`). */
  readonly url: string
  readonly safe: boolean
  readonly secrets: ReadonlyArray<Redacted.Redacted<string>>
}

/**
 * Runs one webService call. `args` are the converted arguments. Fails with
 * VALIDATION (no HttpClient, bad template or arguments, missing secret, a
 * result that does not match `success`), TRANSIENT or EXECUTION as the
 * module's rules say; never with a secret in the error. With `timeout`, the
 * request is aborted at `after` and the call fails with `error()` (the
 * attempt timeout, applied here instead of by a timer racing the call).
 */
export const run = (
  name: string,
  action: WebService,
  args: Readonly<Record<string, unknown>>,
  post: (value: unknown) => Effect.Effect<unknown, ActionError, any> = Effect.succeed,
  timeout?: { readonly after: Duration.Duration; readonly error: () => ActionError } | undefined
): Effect.Effect<unknown, ActionError, any> =>
  Effect.flatMap(Effect.serviceOption(HttpClient.HttpClient), (client) => {
    if (Option.isNone(client)) return Effect.fail(notProvided(name))
    if (timeout === undefined) return call(name, action, args, client.value, post)
    // The deadline aborts the request (and its body) itself, so the call waits only on its own I/O.
    const scoped = call(name, action, args, scopedClient(client.value), post)
    return TimeLimit.abortAfter(scoped, timeout.after, () => Effect.fail(timeout.error()))
  })

// The client whose requests (bodies included) are aborted when the calling scope closes
// (`HttpClient.withScope`), made once per client.
const scopedClients = new WeakMap<
  HttpClient.HttpClient,
  HttpClient.HttpClient.With<HttpClientError.HttpClientError, Scope.Scope>
>()
const scopedClient = (client: HttpClient.HttpClient) => {
  let scoped = scopedClients.get(client)
  if (scoped === undefined) {
    scoped = HttpClient.withScope(client)
    scopedClients.set(client, scoped)
  }
  return scoped
}

const call = <R>(
  name: string,
  action: WebService,
  args: Readonly<Record<string, unknown>>,
  client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, R>,
  post: (value: unknown) => Effect.Effect<unknown, ActionError, any>
): Effect.Effect<unknown, ActionError, any> => {
  const plan = planOf(action)
  if (Result.isFailure(plan)) return Effect.fail(invalid(name, "bad webService definition", plan.failure))
  const { template, fields, paramType, safe } = plan.success
  const built = Endpoint.build(template, fields, args, paramType)
  if (Result.isFailure(built)) return Effect.fail(invalid(name, "invalid arguments for the request", built.failure))
  const { url, body } = built.success
  const send = ({ secret, secrets }: Credentials) => {
    let request = HttpClientRequest.make(action.method)(url)
    if (Object.keys(action.headers).length > 0) request = HttpClientRequest.setHeaders(request, action.headers)
    if (body !== undefined) request = HttpClientRequest.bodyText(request, body, "application/json")
    request = authorize(request, action.auth, secret)
    const about: Call = { name, action, method: action.method, url, safe, secrets }
    return Effect.matchEffect(manualRedirects(client.execute(request)), {
      onFailure: (error) => Effect.fail(requestFailure(about, error)),
      // The result mapper runs inside the redaction below: a server's echo of the secret that a failing
      // mapper quotes is scrubbed as the executor's own failures are.
      onSuccess: (response) => Effect.flatMap(respond(about, response), post)
    })
  }
  if (action.auth === "NO_AUTH") return send(none)
  return Effect.flatMap(credentialsOf(name, action), (credentials) =>
    Effect.mapError(send(credentials), (error) => Redact.scrub(error, credentials.secrets))
  )
}

/**
 * A 3xx is the action's answer on every client: `fetch` would follow it itself (and replay a POST as a GET
 * on 302/303), so it is told not to, keeping any `RequestInit` the caller provided.
 */
const manualRedirects = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.serviceOption(FetchHttpClient.RequestInit), (init) =>
    Effect.provideService(effect, FetchHttpClient.RequestInit, {
      ...Option.getOrUndefined(init),
      redirect: "manual"
    })
  )

// The URL without its query and fragment, for messages.
const targetOf = (url: string): string => {
  const end = url.search(/[?#]/)
  return end < 0 ? url : url.slice(0, end)
}

// =============================================================================
// Failures before a response
// =============================================================================

const codeOf = (cause: unknown): string | undefined => {
  let current = cause
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { readonly code?: unknown }).code
    if (typeof code === "string") return code
    current = (current as { readonly cause?: unknown }).cause
  }
  return undefined
}

// Codes of failures that happen before any byte of the request is sent.
const beforeSending: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT"
])

const isBeforeSending = (code: string | undefined): boolean =>
  code !== undefined &&
  (beforeSending.has(code) || code.startsWith("ERR_TLS_") || /CERT|SSL|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code))

const describeCause = (cause: unknown): string => {
  const code = codeOf(cause)
  const message = cause instanceof Error ? cause.message : cause === undefined ? "" : String(cause)
  if (code === undefined) return message === "" ? "transport error" : message
  return message === "" || message.includes(code) ? message || code : `${code}: ${message}`
}

const notRetried =
  "the request may have been processed, so it is not retried (declare the action idempotent to allow it)"

const requestFailure = (call: Call, error: HttpClientError.HttpClientError): ActionError => {
  const reason = error.reason
  switch (reason._tag) {
    case "InvalidUrlError":
    case "EncodeError":
      return invalid(call.name, "the request cannot be sent", [
        { path: reason._tag === "InvalidUrlError" ? "endpoint" : "", message: describeCause(reason.cause) }
      ])
    default:
      return connectionFailure(call, reason.cause)
  }
}

const connectionFailure = (call: Call, cause: unknown): TransientFailure => {
  const code = codeOf(cause)
  const shown = Redact.text(describeCause(cause), call.secrets)
  const where = `${call.method} ${targetOf(call.url)}`
  const causeField = cause === undefined ? {} : { cause }
  if (isBeforeSending(code)) {
    return new TransientFailure({
      action: call.name,
      message: `${call.name}: ${where} failed before the request was sent (${shown})`,
      outcomeUnknown: false,
      retryable: true,
      ...causeField
    })
  }
  return new TransientFailure({
    action: call.name,
    message: `${call.name}: ${where} failed after the request may have reached the server (${shown})${call.safe ? "" : `; ${notRetried}`}`,
    outcomeUnknown: true,
    retryable: call.safe,
    ...causeField
  })
}

// =============================================================================
// Responses
// =============================================================================

// How much of an error body is read: its excerpt needs no more.
const errorBodyBytes = 65_536

const tooLarge = (call: Call, what: string) =>
  new ExecutionFailure({
    action: call.name,
    message: `${call.name}: ${call.method} ${targetOf(call.url)} answered ${what}, more than the ${call.action.maxResponseBytes} bytes allowed (maxResponseBytes)`
  })

/**
 * Reads at most a cap of a body as it streams (an error body: 64 KiB, then stops quietly; a success:
 * `maxResponseBytes`, EXECUTION past it), then undoes its content encoding, counting the decoded bytes
 * against the same cap.
 */
const readBody = (
  call: Call,
  response: HttpClientResponse.HttpClientResponse,
  success: boolean
): Effect.Effect<Uint8Array, ActionError> => {
  const limit = success ? call.action.maxResponseBytes : errorBodyBytes
  const declared = Number(response.headers["content-length"])
  if (success && Number.isFinite(declared) && declared > limit) {
    return Effect.fail(tooLarge(call, `a Content-Length of ${declared} bytes`))
  }
  // A declared length within the cap, not content-encoded, is read whole: an HTTP client stops at the declared
  // length, and one read costs less than a stream of chunks (the success path of nearly every JSON API).
  // An encoded body streams: a client that decodes it itself (fetch) could hand back more than was declared.
  const encoding = response.headers["content-encoding"]
  if (Number.isFinite(declared) && declared <= limit && (encoding === undefined || encoding === "identity")) {
    return Effect.matchEffect(response.arrayBuffer, {
      onFailure: (error) =>
        error.reason._tag === "EmptyBodyError"
          ? Effect.succeed(new Uint8Array(0))
          : Effect.fail(connectionFailure(call, error.reason.cause)),
      // A client that does not frame by the declared length (an in-process one) is still held to the cap.
      onSuccess: (buffer) =>
        buffer.byteLength <= limit
          ? Effect.succeed(new Uint8Array(buffer))
          : success
            ? Effect.fail(tooLarge(call, "a body that went on"))
            : Effect.succeed(new Uint8Array(buffer, 0, limit))
    })
  }
  const chunks: Array<Uint8Array> = []
  let size = 0
  let over = false
  const read = response.stream.pipe(
    Stream.takeWhile((chunk) => {
      if (size + chunk.length > limit) {
        over = true
        chunks.push(chunk.subarray(0, limit - size))
        size = limit
        return false
      }
      chunks.push(chunk)
      size += chunk.length
      return true
    }),
    Stream.runDrain
  )
  return Effect.matchEffect(read, {
    // A response without a body (a 204, or a client's bodiless response) streams as an empty-body error.
    onFailure: (error) =>
      error.reason._tag === "EmptyBodyError"
        ? Effect.succeed(new Uint8Array(0))
        : Effect.fail(connectionFailure(call, error.reason.cause)),
    onSuccess: () => {
      if (over && success) return Effect.fail(tooLarge(call, "a body that went on"))
      const bytes = new Uint8Array(Buffer.concat(chunks, size))
      return decodeContent(call, response.headers["content-encoding"], bytes, limit, success)
    }
  })
}

const gzipMagic = (bytes: Uint8Array) => bytes[0] === 0x1f && bytes[1] === 0x8b
const zlibMagic = (bytes: Uint8Array) =>
  bytes[0] !== undefined && bytes[1] !== undefined && (bytes[0] & 0x0f) === 8 && ((bytes[0] << 8) | bytes[1]) % 31 === 0

/**
 * The body with its content encoding undone. Some clients (fetch) decode bodies themselves and keep the
 * header: bytes without the encoding's own signature are taken as already decoded.
 */
const decodeContent = (
  call: Call,
  header: string | undefined,
  bytes: Uint8Array,
  limit: number,
  success: boolean
): Effect.Effect<Uint8Array, ActionError> => {
  const encoding = (header ?? "").trim().toLowerCase()
  if (encoding === "" || encoding === "identity" || bytes.length === 0) return Effect.succeed(bytes)
  const fail = (why: string) =>
    new ExecutionFailure({
      action: call.name,
      message: `${call.name}: ${call.method} ${targetOf(call.url)} answered a ${encoding} body that ${why}`
    })
  // An error body may have been cut short: decode what there is, for its excerpt.
  const options = success
    ? { maxOutputLength: limit }
    : { maxOutputLength: limit, finishFlush: Zlib.constants.Z_SYNC_FLUSH }
  const inflate = (run: (done: (error: Error | null, out: Buffer) => void) => void) =>
    Effect.callback<Uint8Array, ActionError>((resume) => {
      run((error, out) => {
        if (error === null) return resume(Effect.succeed(new Uint8Array(out.buffer, out.byteOffset, out.length)))
        if (error instanceof RangeError || /maxOutputLength|larger than/i.test(error.message)) {
          return resume(
            Effect.fail(success ? tooLarge(call, `a ${encoding} body that decodes to more`) : fail("is too large"))
          )
        }
        return resume(Effect.fail(fail(`cannot be decoded (${error.message})`)))
      })
    })
  switch (encoding) {
    case "gzip":
    case "x-gzip":
      return gzipMagic(bytes) ? inflate((done) => Zlib.gunzip(bytes, options, done)) : Effect.succeed(bytes)
    case "deflate":
      return zlibMagic(bytes) ? inflate((done) => Zlib.inflate(bytes, options, done)) : Effect.succeed(bytes)
    case "br":
      // Brotli has no signature: bytes that do not decode as brotli are taken as already decoded.
      return Effect.catch(
        inflate((done) => Zlib.brotliDecompress(bytes, { maxOutputLength: limit }, done)),
        (error) =>
          error.message.includes("allowed") || error.message.includes("too large")
            ? Effect.fail(error)
            : Effect.succeed(bytes)
      )
    default:
      return Effect.fail(fail("cannot be decoded (gzip, deflate and br can)"))
  }
}

const respond = (call: Call, response: HttpClientResponse.HttpClientResponse): Effect.Effect<unknown, ActionError> =>
  Effect.flatMap(readBody(call, response, response.status >= 200 && response.status < 300), (bytes) => {
    const status = response.status
    const media = mediaTypeOf(response.headers["content-type"])
    if (status >= 200 && status < 300) return success(call, status, media, bytes)
    if (HttpResponse.isTransientStatus(status)) {
      return Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.fail(transient(call, status, retryAfterOf(response.headers, now), excerptOf(bytes, media, call.secrets)))
      )
    }
    const excerpt = excerptOf(bytes, media, call.secrets)
    const redirect = status >= 300 && status < 400 ? response.headers.location : undefined
    return Effect.fail(
      new ExecutionFailure({
        action: call.name,
        message:
          `${call.name}: ${call.method} ${targetOf(call.url)} was refused with status ${status}` +
          (redirect === undefined ? "" : ` (a redirect to ${redirect}, which is not followed)`) +
          (excerpt === "" ? "" : `: ${shorten(excerpt, messageExcerptLength)}`),
        status,
        ...(excerpt === "" ? {} : { excerpt })
      })
    )
  })

const transient = (
  call: Call,
  status: number,
  retryAfter: Duration.Duration | undefined,
  excerpt: string
): TransientFailure => {
  // The server's own "not processed, come back later" answers.
  const notProcessed = status === 408 || status === 429 || (status === 503 && retryAfter !== undefined)
  const retryable = notProcessed || call.safe
  return new TransientFailure({
    action: call.name,
    message:
      `${call.name}: ${call.method} ${targetOf(call.url)} answered status ${status}` +
      (retryAfter === undefined ? "" : ` (retry after ${Duration.format(retryAfter)})`) +
      (excerpt === "" ? "" : `: ${shorten(excerpt, messageExcerptLength)}`) +
      (retryable ? "" : `; ${notRetried}`),
    status,
    outcomeUnknown: !notProcessed,
    retryable,
    ...(retryAfter === undefined ? {} : { retryAfter })
  })
}

const success = (
  call: Call,
  status: number,
  media: MediaType | undefined,
  bytes: Uint8Array
): Effect.Effect<unknown, ActionError> => {
  const schema = call.action.success
  const value: Effect.Effect<unknown, ActionError> =
    status === 204 || status === 205 || bytes.length === 0
      ? Effect.succeed(null)
      : isJson(media)
        ? Effect.flatMap(decodeText(call, bytes, media?.charset), (text) => parseJson(call, status, text))
        : isText(media)
          ? decodeText(call, bytes, media?.charset)
          : Effect.succeed(bytes)
  if (schema === undefined) return value
  // `Action.webService` takes any schema; one needing decoding services would fail here, so none is assumed.
  const codec = schema as Schema.Codec<unknown, unknown, never>
  return Effect.flatMap(value, (raw) => ActionResult.decode(ActionResult.make(raw, { action: call.name }), codec))
}

const parseJson = (call: Call, status: number, text: string): Effect.Effect<unknown, ExecutionFailure> => {
  const parsed = Json.parseJson(text)
  if (Result.isSuccess(parsed)) return Effect.succeed(parsed.success)
  // Redacted before it is cut; the parser's own message is left out, as it quotes the body's first
  // characters, which may be the start of an unquoted echoed secret.
  const excerpt = shorten(collapse(Redact.text(text, call.secrets)), excerptLength)
  return Effect.fail(
    new ExecutionFailure({
      action: call.name,
      message: `${call.name}: ${call.method} ${targetOf(call.url)} answered ${status} with a JSON content type but a body that is not JSON: ${shorten(excerpt, messageExcerptLength)}`,
      status,
      excerpt
    })
  )
}

// =============================================================================
// Content types and charsets
// =============================================================================

interface MediaType {
  readonly type: string
  readonly charset: string | undefined
}

const mediaTypeOf = (header: string | undefined): MediaType | undefined => {
  if (header === undefined) return undefined
  const [essence = "", ...parameters] = header.split(";")
  let charset: string | undefined
  for (const parameter of parameters) {
    const at = parameter.indexOf("=")
    if (at >= 0 && parameter.slice(0, at).trim().toLowerCase() === "charset") {
      charset = parameter
        .slice(at + 1)
        .trim()
        .replace(/^"(.*)"$/, "$1")
    }
  }
  return { type: essence.trim().toLowerCase(), charset }
}

const isJson = (media: MediaType | undefined): boolean =>
  media !== undefined &&
  (media.type === "application/json" || media.type === "text/json" || media.type.endsWith("+json"))

const isText = (media: MediaType | undefined): boolean =>
  media === undefined ||
  media.charset !== undefined ||
  media.type.startsWith("text/") ||
  isJson(media) ||
  media.type.endsWith("/xml") ||
  media.type.endsWith("+xml") ||
  media.type.endsWith("/javascript") ||
  media.type === "application/x-www-form-urlencoded"

const isHtml = (media: MediaType | undefined): boolean =>
  media?.type === "text/html" || media?.type === "application/xhtml+xml"

type Decoder = InstanceType<typeof TextDecoder>

const decoders = new Map<string, Decoder>()

// A decoder for a label, or undefined when `TextDecoder` does not know it.
const decoderFor = (label: string): Decoder | undefined => {
  const key = label.trim().toLowerCase()
  const cached = decoders.get(key)
  if (cached !== undefined) return cached
  const made = Result.try(() => new TextDecoder(key))
  if (Result.isFailure(made)) return undefined
  decoders.set(key, made.success)
  return made.success
}

// A byte-order mark names the encoding whatever the header says (WHATWG "decode").
const bomLabel = (bytes: Uint8Array): string | undefined => {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8"
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le"
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be"
  return undefined
}

const decodeQuietly = (bytes: Uint8Array, charset: string | undefined): string =>
  (decoderFor(bomLabel(bytes) ?? charset ?? "utf-8") ?? decoderFor("utf-8")!).decode(bytes)

const decodeText = (call: Call, bytes: Uint8Array, charset: string | undefined): Effect.Effect<string> => {
  const label = bomLabel(bytes) ?? charset ?? "utf-8"
  const decoder = decoderFor(label)
  if (decoder !== undefined) return Effect.succeed(decoder.decode(bytes))
  return Effect.as(
    Effect.logWarning(
      Redact.text(
        `${call.name}: unknown charset ${JSON.stringify(label)} in the response of ${call.method} ${targetOf(call.url)}; decoding as UTF-8`,
        call.secrets
      )
    ),
    decoderFor("utf-8")!.decode(bytes)
  )
}

// =============================================================================
// Excerpts and Retry-After
// =============================================================================

const collapse = (text: string): string => text.replace(/\s+/g, " ").trim()

const entities: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " "
}

const decodeEntities = (text: string): string =>
  text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, entity: string) => {
    if (entity.startsWith("#")) {
      const code =
        entity[1] === "x" || entity[1] === "X" ? Number.parseInt(entity.slice(2), 16) : Number(entity.slice(1))
      return Number.isInteger(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return entities[entity.toLowerCase()] ?? whole
  })

// An HTML page reduced to its title, or to its text when it has none.
const htmlText = (html: string): string => {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1]
  if (title !== undefined && collapse(title) !== "") return collapse(decodeEntities(title))
  return collapse(
    decodeEntities(
      html
        .replace(/<!--[\s\S]*?-->/g, " ")
        .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, " ")
        .replace(/<[^>]*>/g, " ")
    )
  )
}

// The first 64 KiB are plenty for a 1,000-character excerpt.
// Redacted before it is cut, so a secret the cut would split is never left half shown.
const excerptOf = (
  bytes: Uint8Array,
  media: MediaType | undefined,
  secrets: ReadonlyArray<Redacted.Redacted<string>>
): string => {
  if (bytes.length === 0) return ""
  const text = Redact.text(decodeQuietly(bytes.subarray(0, 65_536), media?.charset), secrets)
  const html = isHtml(media) || /^\s*<(!doctype\s+html|html)[\s>]/i.test(text)
  return shorten(html ? htmlText(text) : collapse(text), excerptLength)
}

/** The server's requested wait (see `retryAfter`), capped at {@link maxRetryAfter}. */
export const retryAfterOf = (headers: Headers.Headers, now: number): Duration.Duration | undefined => {
  const requested = HttpResponse.retryAfter(headers, now)
  return requested === undefined ? undefined : Duration.min(requested, maxRetryAfter)
}
