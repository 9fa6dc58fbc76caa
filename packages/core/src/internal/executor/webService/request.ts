/**
 * The request of a webService call: the action's definition checked once
 * (its endpoint template, where the arguments go, its headers, its auth);
 * the secret read at call time through `Config.Redacted(authTokenEnv)` and
 * refused when it cannot be sent; the request itself — the endpoint and
 * arguments as `endpoint.ts` builds them, the action's fixed `headers`,
 * `auth` BEARER (`Authorization: Bearer <secret>`) or BASIC (the secret is
 * `user:password`) — sent with redirects left unfollowed.
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as Action from "../../../Action.ts"
import type { Issue, ValidationError } from "../../../ActionError.ts"
import * as IdempotencyKey from "../../idempotencyKey.ts"
import * as Redact from "../../redact.ts"
import * as Endpoint from "../endpoint.ts"
import { invalid, type WebService } from "./failure.ts"

/**
 * Where the arguments go: the action's `paramType`, else BODY for POST, PUT
 * and PATCH and QUERY for the other methods.
 */
export const paramTypeOf = (action: WebService): Endpoint.ParamType =>
  action.paramType ??
  (action.method === "POST" || action.method === "PUT" || action.method === "PATCH" ? "BODY" : "QUERY")

/** What does not change between calls of one action: checked once. */
export interface Plan {
  readonly template: Endpoint.Template
  readonly fields: ReadonlyArray<string>
  readonly paramType: Endpoint.ParamType
  readonly safe: boolean
}

const plans = new WeakMap<WebService, Result.Result<Plan, Array<Issue>>>()

const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const headerValue = /^[\t\x20-\x7e\x80-\xff]*$/

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

// A key with characters a header cannot carry is sent percent-encoded (UTF-8; a lone surrogate as U+FFFD).
const headerSafe = (key: string): string =>
  /^[\x20-\x7e]*$/.test(key) ? key : encodeURIComponent(key.replace(loneSurrogate, "\uFFFD"))

/** The plan of an action, or the issues of its definition; computed once per action. */
export const planOf = (action: WebService): Result.Result<Plan, Array<Issue>> => {
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
  const idempotency = action.idempotencyHeader
  if (idempotency !== undefined && !headerName.test(idempotency)) {
    issues.push({ path: "idempotencyHeader", message: "is not a valid header name" })
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

/** The secrets of one call: the secret itself and, for BASIC, the password alone (when 4+ characters). */
export interface Credentials {
  readonly secret: Redacted.Redacted<string> | undefined
  readonly secrets: ReadonlyArray<Redacted.Redacted<string>>
}

/** The credentials of an action without auth. */
export const none: Credentials = { secret: undefined, secrets: [] }

// The Config reading each secret variable, made once per name: making one compiles its schema (~0.1 ms), a
// read of a made one costs a few µs. Names come from action definitions; past this many, each read makes its own.
const configs = new Map<string, Config.Config<Redacted.Redacted<string>>>()
const maxConfigs = 1024
const secretConfig = (variable: string): Config.Config<Redacted.Redacted<string>> => {
  const known = configs.get(variable)
  if (known !== undefined) return known
  const made = Config.Redacted(variable)
  if (configs.size < maxConfigs) configs.set(variable, made)
  return made
}

/** The secret of a call, read now; VALIDATION when it is unset or cannot be sent. */
export const credentialsOf = (name: string, action: WebService): Effect.Effect<Credentials, ValidationError> => {
  const variable = action.authTokenEnv
  if (action.auth === "NO_AUTH" || variable === undefined) return Effect.succeed(none)
  return secretConfig(variable).pipe(
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

/**
 * The request of a call: `url` and `body` built from the arguments, the action's headers, the call's
 * idempotency key under `idempotencyHeader` (when the action names one and the call has a key) and its auth.
 * Made inside the call's fiber, whose idempotency key it reads.
 */
export const requestOf = (
  action: WebService,
  url: string,
  body: string | undefined,
  secret: Redacted.Redacted<string> | undefined
): HttpClientRequest.HttpClientRequest => {
  let request = HttpClientRequest.make(action.method)(url)
  if (Object.keys(action.headers).length > 0) request = HttpClientRequest.setHeaders(request, action.headers)
  const key = action.idempotencyHeader === undefined ? undefined : IdempotencyKey.current()
  if (key !== undefined) {
    request = HttpClientRequest.setHeader(request, action.idempotencyHeader as string, headerSafe(key))
  }
  if (body !== undefined) request = HttpClientRequest.bodyText(request, body, "application/json")
  return authorize(request, action.auth, secret)
}

/**
 * A 3xx is the action's answer on every client: `fetch` would follow it itself (and replay a POST as a GET
 * on 302/303), so it is told not to, keeping any `RequestInit` the caller provided.
 */
export const manualRedirects = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.serviceOption(FetchHttpClient.RequestInit), (init) =>
    Effect.provideService(effect, FetchHttpClient.RequestInit, {
      ...Option.getOrUndefined(init),
      redirect: "manual"
    })
  )
