/**
 * The run step of one attempt: the action's executor (local, webService, llm
 * or mcpTool, each in its own module) followed by its result mapper, run as
 * one unit so a retry repeats both.
 */
import * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import type * as Action from "../../Action.ts"
import type { ActionError } from "../../ActionError.ts"
import * as ActionResult from "../../ActionResult.ts"
import * as Lazy from "../lazy.ts"
import * as Redact from "../redact.ts"
import * as Secrets from "../secrets.ts"
import * as Callback from "../callback.ts"
import type { Attempt } from "./runtime.ts"
import * as Endpoint from "./endpoint.ts"
import type * as LlmModule from "./llm.ts"
import * as Local from "./local.ts"
import * as McpTool from "./mcpTool.ts"
import type * as WebServiceModule from "./webService.ts"

// The HTTP client and the webService executor are loaded by the first webService call, the llm executor by
// the first llm action.
const WebService = Lazy.make((): Promise<typeof WebServiceModule> => import("./webService.ts"))
const Llm = Lazy.make((): Promise<typeof LlmModule> => import("./llm.ts"))

const mapped = (
  attempt: Attempt,
  mapResult: Action.MapResult | undefined,
  raw: Effect.Effect<unknown, ActionError, any>
): Effect.Effect<unknown, ActionError, any> =>
  mapResult === undefined
    ? raw
    : Effect.flatMap(raw, (value) =>
        Effect.map(
          Callback.fromReturned(attempt.name, "mapResult", () =>
            mapResult(ActionResult.make(value, { action: attempt.name }), attempt.view ?? attempt.args)
          ),
          (out) => (ActionResult.isActionResult(out) ? out.value : out)
        )
      )

/**
 * One attempt of the run step: the action's executor, then its result mapper.
 */
// V8 keeps the frames of an error's stack — with their receivers, such as an HTTP response and through it
// the client's pooled connections — until `.stack` is first read. Reading it once turns it into plain text,
// so a failure that a caller keeps costs what its data does.
const plain = (error: ActionError): Effect.Effect<never, ActionError> =>
  Effect.suspend(() => {
    void error.stack
    return Effect.fail(error)
  })

export const execute = (attempt: Attempt): Effect.Effect<unknown, ActionError, any> =>
  Effect.catch(executeRaw(attempt), plain)

const executeRaw = (attempt: Attempt): Effect.Effect<unknown, ActionError, any> => {
  const action = attempt.action
  switch (action._tag) {
    case "local":
      return Local.run({ ...attempt, action })
    case "webService":
      // The mapper runs inside the executor, under its redaction of the call's secrets.
      return WebService.use((webService) =>
        webService.run(
          attempt.name,
          action,
          attempt.args,
          (value) => mapped(attempt, action.mapResult, Effect.succeed(value)),
          attempt.timeout
        )
      )
    case "llm":
      return mapped(
        attempt,
        action.mapResult,
        // The model call's errors are scrubbed of the agent's credentials too, before its span records them,
        // and of what the MCP client obtained by then.
        Effect.provideService(
          Llm.use((llm) => llm.run({ ...attempt, action })),
          Redact.Known,
          Secrets.learning(attempt.agent.secrets ?? noSecrets)
        )
      )
    case "mcpTool":
      return mapped(
        attempt,
        action.mapResult,
        McpTool.execute({
          name: attempt.name,
          action,
          tool: attempt.tool ?? "",
          args: attempt.args,
          agent: attempt.agent,
          approved: attempt.approved
        })
      )
  }
}

const noSecrets: Effect.Effect<ReadonlyArray<Redacted.Redacted<string>>> = Effect.succeed([])

/**
 * The secrets a call of `action` reads (a webService's `authTokenEnv`, an
 * mcpTool's `apiKeyEnv` and the credentials in its stdio server's
 * environment), read where a text may leave the agent with one of them
 * (see `secrets.ts`); `undefined` for an action that names none.
 */
export const secretsOf = (action: Action.Any): Effect.Effect<ReadonlyArray<Redacted.Redacted<string>>> | undefined => {
  switch (action._tag) {
    case "webService":
      return action.auth === "NO_AUTH" || action.authTokenEnv === undefined
        ? undefined
        : WebService.use((webService) => webService.secretsOf(action))
    case "mcpTool":
      return action.apiKeyEnv === undefined && McpTool.environmentSecrets(action.server).length === 0
        ? undefined
        : McpTool.secretsOf(action)
    default:
      return undefined
  }
}

/**
 * Whether the executor bounds an attempt of `action` itself, so that no
 * timer of the run step races it: a webService call without a result mapper
 * (its request, body included, is aborted at the deadline; a mapper is user
 * code the abort cannot reach). An mcpTool action passes its timeout to the
 * MCP client instead, and needs no timer either.
 */
export const timesItsAttempt = (action: Action.Any): boolean =>
  action._tag === "webService" && action.mapResult === undefined

/**
 * Whether an attempt cut off by its timeout may be retried: not for a
 * webService or mcpTool call whose request may have reached the server and
 * that is not idempotent (an attempt may connect, list and send its call
 * before the timer cuts it, so a non-idempotent mcpTool is never repeated).
 */
export const timeoutRetryable = (action: Action.Any): boolean =>
  action._tag === "webService"
    ? Endpoint.isSafeToRepeat(action)
    : action._tag === "mcpTool"
      ? action.idempotent === true
      : true
