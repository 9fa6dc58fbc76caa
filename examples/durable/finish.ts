/**
 * The durable example's second process: reads the paused run "refund-42"
 * from Postgres, approves its pending call, and waits for the turn to end:
 * the refund runs here, then the model's answer.
 *
 * Run: node examples/durable/main.ts (it starts Postgres and both processes)
 */
import { Chat } from "@rolecraft/core"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect } from "effect"
import { runProcess, support } from "./support.ts"

const url = process.argv[2] ?? ""

const final = await runProcess(
  url,
  [ScriptedModel.reply("Order-42 is refunded.")],
  Effect.gen(function* () {
    const status = yield* support.status("refund-42")
    if (status._tag !== "AwaitingApproval") return yield* Effect.die(`expected a paused run, got ${status._tag}`)
    console.log(
      `[pid ${process.pid}] found the paused run; alice approves ${status.pending.map((p) => p.toolCallId).join(", ")}`
    )
    yield* support.decide(
      "refund-42",
      Object.fromEntries(status.pending.map((p) => [p.toolCallId, Chat.approve("alice")]))
    )
    return yield* support.await("refund-42", { pollInterval: "50 millis" })
  })
)
console.log(
  `[pid ${process.pid}] done: ${final._tag === "Done" && final.result._tag === "Completed" ? final.result.text : final._tag}`
)
