/**
 * One call, decided once, seen through the public API: an approval-gated MCP tool call in a chat turn, paused and
 * resumed, against a real MCP server (the SDK's own, in memory). Each run of the call — the first, which pauses,
 * and the resumed one, which runs — goes through the pipeline once (one `ActionStarted` each; one
 * `Rolecraft.step.authority` span each with step spans on: authority decided once per run, the offering of tools
 * being a filter). The approval store, counted, is asked once for the pending token; the resumed run records the
 * decision and consumes the token with one and the same binding value (computed once for that run). The
 * arguments reach the server converted once, as sent. The counts that the public API cannot show (digests,
 * decodes) are pinned by `packages/core/test/internal/pipeline/call.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { Action, Agent, ApprovalStore, Chat, type Events, Role } from "@rolecraft/core"
import { InMemoryMcp, ScriptedModel, Telemetry } from "@rolecraft/testing"
import { Effect, Fiber, Layer, Stream, Tracer } from "effect"
import { z } from "zod/v4"

/** An approval store that counts its operations and keeps the bindings it was given. */
const counting = () => {
  const store = ApprovalStore.makeMemory()
  const seen = {
    requests: [] as Array<ApprovalStore.Binding>,
    approvals: [] as Array<ApprovalStore.Binding | undefined>,
    consumes: [] as Array<ApprovalStore.Binding>
  }
  const counted: ApprovalStore.Service = {
    ...store,
    request: (binding, reason, ttl, options) =>
      Effect.andThen(
        Effect.sync(() => seen.requests.push(binding)),
        store.request(binding, reason, ttl, options)
      ),
    approve: (id, approver, binding) =>
      Effect.andThen(
        Effect.sync(() => seen.approvals.push(binding)),
        store.approve(id, approver, binding)
      ),
    consume: (id, binding, options) =>
      Effect.andThen(
        Effect.sync(() => seen.consumes.push(binding)),
        store.consume(id, binding, options)
      )
  }
  return { seen, layer: Layer.succeed(ApprovalStore.ApprovalStore, counted) }
}

const server = (deleted: Array<unknown>) => () => {
  const mcp = new McpServer({ name: "files", version: "1.0.0" })
  mcp.registerTool(
    "delete_file",
    { description: "Delete a file", inputSchema: { path: z.string(), force: z.boolean() } },
    (args) => {
      deleted.push(args)
      return { content: [{ type: "text", text: `deleted ${args.path}` }] }
    }
  )
  return mcp
}

describe("an approval-gated MCP tool call paused and resumed in a chat turn", () => {
  it.effect(
    "runs the pipeline once per run, asks the store once, and binds its decision and use to one binding",
    () => {
      const deleted: Array<unknown> = []
      const { seen, layer } = counting()
      const recorder = Telemetry.make()
      return Effect.gen(function* () {
        const files = Role.make({
          identity: { name: "files", goal: "Tidy files", domain: "ops" },
          actions: {
            files: Action.mcpTool({ description: "Files", server: "memory://files" }).pipe(
              Action.requireApproval({ reason: "Deletes files" })
            )
          }
        })
        const agent = yield* Agent.make({ id: "ops", roles: [files], traceSteps: true })
        const scripted = yield* ScriptedModel.make([
          // `force` as a string: converted once, against the tool's own schema, to the boolean the server takes.
          ScriptedModel.toolCalls([
            { id: "call_1", name: "files_delete_file", arguments: { path: "/tmp/report.txt", force: "true" } }
          ]),
          ScriptedModel.reply("Deleted.")
        ])
        const seenEvents: Array<Events.Event> = []
        const listening = yield* Effect.forkChild(
          Stream.runForEach(agent.events, (event) => Effect.sync(() => seenEvents.push(event)))
        )
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow

        const paused = yield* agent.chat("Delete the report").pipe(Effect.provide(scripted.layer))
        assert.strictEqual(paused._tag, "AwaitingApproval")
        if (paused._tag !== "AwaitingApproval") return
        const [pending] = paused.pending
        assert.deepStrictEqual(pending, {
          toolCallId: "call_1",
          action: "files",
          tool: "delete_file",
          arguments: { path: "/tmp/report.txt", force: "true" },
          pendingTokenId: pending?.pendingTokenId ?? "",
          reason: "Deletes files",
          // What the approver is shown of the tool, as listed when asked: its definition's digest and description.
          definition: { digest: pending?.definition?.digest ?? "", description: "Delete a file" }
        })
        assert.match(pending?.definition?.digest ?? "", /^sha256:[0-9a-f]{64};/)
        // The pause wrote no tool message: the call has none until it is decided.
        assert.isFalse(paused.state.messages.some((message) => message.role === "tool"))
        const done = yield* agent
          .resume(paused.state, { call_1: Chat.approve("ann") })
          .pipe(Effect.provide(scripted.layer))
        assert.strictEqual(done._tag, "Completed")
        assert.deepStrictEqual(deleted, [{ path: "/tmp/report.txt", force: true }])

        // The store: asked once; the decision and the consume of the resumed run share one binding value.
        assert.strictEqual(seen.requests.length, 1)
        assert.strictEqual(seen.approvals.length, 1)
        assert.strictEqual(seen.consumes.length, 1)
        assert.strictEqual(seen.approvals[0], seen.consumes[0])
        assert.deepStrictEqual(seen.consumes[0], seen.requests[0])
        assert.deepStrictEqual(
          [seen.requests[0]?.agentId, seen.requests[0]?.action, seen.requests[0]?.tool],
          ["ops", "files", "delete_file"]
        )

        // The pipeline ran twice: once to the pause (APPROVAL), once to the end; each run decided authority once.
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow
        yield* Fiber.interrupt(listening)
        const actionEvents = seenEvents.filter(
          (event) =>
            (event._tag === "ActionStarted" || event._tag === "ActionSucceeded" || event._tag === "ActionFailed") &&
            event.action === "files"
        )
        assert.deepStrictEqual(
          actionEvents.map((event) => (event._tag === "ActionFailed" ? `${event._tag} ${event.category}` : event._tag)),
          ["ActionStarted", "ActionFailed APPROVAL", "ActionStarted", "ActionSucceeded"]
        )
        const steps = recorder.spans.map((span) => span.name).filter((name) => name.startsWith("Rolecraft.step."))
        const count = (step: string) => steps.filter((name) => name === `Rolecraft.step.${step}`).length
        assert.deepStrictEqual(
          {
            authority: count("authority"),
            approval: count("approval"),
            conversion: count("conversion"),
            run: count("run")
          },
          { authority: 2, approval: 2, conversion: 1, run: 1 }
        )
        yield* scripted.assertDone
      }).pipe(
        Effect.provide(
          Layer.mergeAll(
            layer,
            InMemoryMcp.layer({ "memory://files": server(deleted) }),
            Layer.succeed(Tracer.Tracer, recorder.tracer)
          )
        )
      )
    }
  )
})
