/**
 * The durable example's first process: starts the run "refund-42"; the
 * model calls `refund`, which needs approval, so the run pauses; the process
 * prints the pending call and exits. Nothing of the turn stays in memory.
 *
 * Run: node examples/durable/main.ts (it starts Postgres and both processes)
 */
import { ScriptedModel } from "@rolecraft/testing"
import { Console, Effect } from "effect"
import { runProcess, support } from "./support.ts"

const url = process.argv[2] ?? ""

const status = await runProcess(
  url,
  [ScriptedModel.toolCalls([{ name: "refund", arguments: { order: "order-42" } }])],
  Effect.gen(function* () {
    yield* support.start("refund-42", "Please refund order-42")
    // The status is stored: read it until the run pauses.
    return yield* support.status("refund-42").pipe(
      Effect.tap(() => Effect.sleep("50 millis")),
      Effect.repeat({ until: (s) => s._tag !== "Running" })
    )
  })
)
if (status._tag === "AwaitingApproval") {
  for (const call of status.pending) {
    await Effect.runPromise(
      Console.log(
        `[pid ${process.pid}] paused: ${call.action}(${JSON.stringify(call.arguments)}) needs approval: ${call.reason}`
      )
    )
  }
}
