/**
 * Progress of a long action: an action's effect reports how far it has got
 * (`yield* Progress.report(50, { total: 100, message: "halfway" })`), and
 * whoever runs the call decides where that goes. `Mcp.serve` sends each
 * report to the MCP client as a `notifications/progress` when the client
 * asked for progress (a `progressToken`); anywhere else a report does
 * nothing, so an action can report unconditionally.
 *
 * @example
 * ```ts
 * import { Action, Progress } from "@rolecraft/core"
 * import { Effect, Schema } from "effect"
 *
 * const importRows = Action.local({
 *   description: "Import the rows of a file",
 *   parameters: { path: Schema.String },
 *   run: ({ path }) =>
 *     Effect.gen(function* () {
 *       for (let done = 0; done <= 100; done += 50) {
 *         yield* Progress.report(done, { total: 100, message: `importing ${path}` })
 *       }
 *       return "imported"
 *     })
 * })
 * ```
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/**
 * One report: `progress` so far (it should only grow), and optionally the
 * `total` it grows to and a `message` for a person.
 *
 * @category models
 * @since 0.2.0
 */
export interface Update {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

/**
 * Where reports go: a function given each {@link Update}, or `undefined`
 * (the default) to drop them. `Mcp.serve` provides one per call whose
 * client sent a `progressToken`; provide your own around `agent.execute`
 * to watch a call's progress elsewhere.
 *
 * @category services
 * @since 0.2.0
 */
export const Reporter = Context.Reference<((update: Update) => Effect.Effect<void>) | undefined>(
  "@rolecraft/core/Progress/Reporter",
  { defaultValue: () => undefined }
)

/**
 * Reports progress to the call's {@link Reporter}; does nothing when there
 * is none. Never fails.
 *
 * @category constructors
 * @since 0.2.0
 */
export const report = (
  progress: number,
  options?: { readonly total?: number | undefined; readonly message?: string | undefined }
): Effect.Effect<void> =>
  Effect.flatMap(Effect.service(Reporter), (reporter) =>
    reporter === undefined ? Effect.void : reporter({ progress, total: options?.total, message: options?.message })
  )
