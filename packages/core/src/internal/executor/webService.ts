/**
 * The webService executor: one HTTP call over Effect's `HttpClient`, read
 * optionally from the context (missing → VALIDATION inside the run step, so
 * a fallback still runs).
 *
 * - The request (`webService/request.ts`): the action's definition checked
 *   once, the secret read at call time, the endpoint, arguments, headers and
 *   auth; redirects are not followed.
 * - The answer (`webService/response.ts`): classified by status before any
 *   body is parsed; the body read under a cap (`webService/body.ts`) and as
 *   text by its content type and charset (`webService/text.ts`).
 * - Failures before an answer (`webService/failure.ts`): a refused definition
 *   or arguments (VALIDATION), a transport failure (TRANSIENT).
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
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import { type ActionError, ValidationError } from "../../ActionError.ts"
import * as Endpoint from "./endpoint.ts"
import * as Redact from "../redact.ts"
import type { AttemptTimeout } from "../resilience/runStep.ts"
import * as TimeLimit from "../resilience/timeLimit.ts"
import { type Call, invalid, requestFailure, type WebService } from "./webService/failure.ts"
import { type Credentials, credentialsOf, manualRedirects, none, planOf, requestOf } from "./webService/request.ts"
import { respond } from "./webService/response.ts"

const notProvided = (name: string): ValidationError =>
  new ValidationError({
    action: name,
    message: `${name}: HttpClient not provided: provide an HttpClient layer (e.g. NodeHttpClient.layerUndici from @effect/platform-node)`,
    issues: [{ path: "", message: "HttpClient not provided" }]
  })

/**
 * The secrets a call of `action` holds, for redacting what runs around it
 * (its fallback, its role's hooks): none when the secret is unset or refused.
 */
export const secretsOf = (action: WebService): Effect.Effect<ReadonlyArray<Redacted.Redacted<string>>> =>
  credentialsOf("", action).pipe(
    Effect.map((credentials) => credentials.secrets),
    Effect.orElseSucceed(() => [])
  )

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
  timeout?: AttemptTimeout | undefined
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
    const request = requestOf(action, url, body, secret)
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
