/**
 * The executors of the run step, one per action type, and the result mapper
 * that runs with them as one unit (SPEC §3, §9 step 7). Each dispatched type's
 * executor lives in its own module.
 */
import * as Effect from "effect/Effect"
import type * as Action from "../Action.ts"
import type { ActionError } from "../ActionError.ts"
import * as ActionResult from "../ActionResult.ts"
import * as Resilience from "../Resilience.ts"
import type * as Role from "../Role.ts"
import * as Llm from "./llm.ts"
import type * as McpConnections from "./mcpConnections.ts"
import * as McpTool from "./mcpTool.ts"
import * as WebService from "./webService.ts"

/**
 * What the agent holds for the executors: its id and per-agent resources
 * (`mcp`: its MCP connections, closed with its scope).
 */
export interface AgentRuntime {
  readonly id: string
  readonly mcp: McpConnections.Pool
}

/**
 * What an executor gets for one attempt. `spec` is the spec of the role the
 * action belongs to (its `model` selects the llm actions' model and
 * temperature); absent means `{}`.
 */
export interface Attempt<X extends Action.Any = Action.Any> {
  readonly name: string
  readonly action: X
  readonly args: Readonly<Record<string, unknown>>
  readonly context: Omit<Action.Context, "signal">
  readonly agent: AgentRuntime
  readonly spec?: Role.Spec | undefined
}

const runLocal = (attempt: Attempt<Action.Local<any, any, any>>): Effect.Effect<unknown, ActionError, any> =>
  Resilience.fromReturned(attempt.name, "run", (signal) =>
    attempt.action.run(attempt.args, { ...attempt.context, signal })
  )

const mapped = (
  attempt: Attempt,
  mapResult: Action.MapResult | undefined,
  raw: Effect.Effect<unknown, ActionError, any>
): Effect.Effect<unknown, ActionError, any> =>
  mapResult === undefined
    ? raw
    : Effect.flatMap(raw, (value) =>
        Effect.map(
          Resilience.fromReturned(attempt.name, "mapResult", () =>
            mapResult(ActionResult.make(value, { action: attempt.name }), attempt.args)
          ),
          (out) => (ActionResult.isActionResult(out) ? out.value : out)
        )
      )

/**
 * One attempt of the run step: the action's executor, then its result mapper.
 */
export const execute = (attempt: Attempt): Effect.Effect<unknown, ActionError, any> => {
  const action = attempt.action
  switch (action._tag) {
    case "local":
      return runLocal({ ...attempt, action })
    case "webService":
      return mapped(attempt, action.mapResult, WebService.run(attempt.name, action, attempt.args))
    case "llm":
      return mapped(attempt, action.mapResult, Llm.run({ ...attempt, action }))
    case "mcpTool":
      return mapped(attempt, action.mapResult, McpTool.execute({ ...attempt, action }))
  }
}

/**
 * Whether an attempt cut off by its timeout may be retried: not for a
 * webService call whose request may have reached the server and that is not
 * idempotent (SPEC §6, C28).
 */
export const timeoutRetryable = (action: Action.Any): boolean =>
  action._tag === "webService" ? WebService.isSafeToRepeat(action) : true
