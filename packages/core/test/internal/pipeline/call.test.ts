/**
 * One call, decided once: what the public API cannot show of an approval-gated MCP tool call paused and resumed
 * in a chat turn (`test/call-once.test.ts` pins what it can: the store's calls and bindings, the events, the step
 * spans). Counted inside: the authority decision (`AuthorityKernel.check`), the arguments' digest
 * (`ApprovalStore.digest`) and their decoding (`Conversion.decode` for the call) — one of each per run of the
 * call that reaches it. The first run pauses at its approval step: one authority decision, one digest, no
 * decoding. The resumed run decides authority again (policy may have changed), computes its binding once — the
 * decision recorded and the token consumed with it — and decodes the tool's arguments once, against the tool's
 * own schema.
 */
import { assert, describe, it } from "@effect/vitest"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { InMemoryMcp, ScriptedModel } from "@rolecraft/testing"
import { Effect } from "effect"
import { vi } from "vitest"
import { z } from "zod/v4"
import * as Action from "../../../src/Action.ts"
import * as Agent from "../../../src/Agent.ts"
import * as Chat from "../../../src/Chat.ts"
import * as Role from "../../../src/Role.ts"

const counts = vi.hoisted(() => ({ checks: 0, digests: 0, decodes: [] as Array<string> }))

vi.mock("../../../src/ApprovalStore.ts", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../../src/ApprovalStore.ts")>()
  return {
    ...original,
    digest: (value: unknown) => {
      counts.digests++
      return original.digest(value)
    }
  }
})
vi.mock("../../../src/internal/pipeline/authority.ts", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../../src/internal/pipeline/authority.ts")>()
  return {
    ...original,
    check: (...args: Parameters<typeof original.check>) => {
      counts.checks++
      return original.check(...args)
    }
  }
})
vi.mock("../../../src/internal/schema/decode.ts", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../../src/internal/schema/decode.ts")>()
  return {
    ...original,
    decode: (...args: Parameters<typeof original.decode>) => {
      counts.decodes.push(args[2]?.action ?? "")
      return original.decode(...args)
    }
  }
})

/** The counts so far of the call `files` (its decodes named by the action or the tool's label). */
const snapshot = () => ({
  checks: counts.checks,
  digests: counts.digests,
  decodes: counts.decodes.filter((action) => action === "files" || action === "files/delete_file")
})

const server = () => {
  const mcp = new McpServer({ name: "files", version: "1.0.0" })
  mcp.registerTool(
    "delete_file",
    { description: "Delete a file", inputSchema: { path: z.string(), force: z.boolean() } },
    (args) => ({ content: [{ type: "text", text: `deleted ${args.path} (force ${String(args.force)})` }] })
  )
  return mcp
}

describe("an approval-gated MCP tool call paused and resumed in a chat turn, counted inside", () => {
  it.effect("one authority decision, one digest and at most one decode of the arguments per run", () =>
    Effect.gen(function* () {
      const files = Role.make({
        identity: { name: "files", goal: "Tidy files", domain: "ops" },
        actions: {
          files: Action.mcpTool({ description: "Files", server: "memory://files" }).pipe(
            Action.requireApproval({ reason: "Deletes files" })
          )
        }
      })
      const agent = yield* Agent.make({ id: "ops", roles: [files] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([
          { id: "call_1", name: "files_delete_file", arguments: { path: "/tmp/report.txt", force: "true" } }
        ]),
        ScriptedModel.reply("Deleted.")
      ])
      const before = snapshot()
      const paused = yield* agent.chat("Delete the report").pipe(Effect.provide(scripted.layer))
      assert.strictEqual(paused._tag, "AwaitingApproval")
      if (paused._tag !== "AwaitingApproval") return
      const first = snapshot()
      assert.deepStrictEqual(
        { checks: first.checks - before.checks, digests: first.digests - before.digests, decodes: first.decodes },
        { checks: 1, digests: 1, decodes: [] }
      )

      const done = yield* agent
        .resume(paused.state, { call_1: Chat.approve("ann") })
        .pipe(Effect.provide(scripted.layer))
      assert.strictEqual(done._tag, "Completed")
      if (done._tag !== "Completed") return
      assert.include(done.messages.find((m) => m.role === "tool")?.content ?? "", "force true")
      const second = snapshot()
      assert.deepStrictEqual(
        {
          checks: second.checks - first.checks,
          digests: second.digests - first.digests,
          decodes: second.decodes.slice(first.decodes.length)
        },
        { checks: 1, digests: 1, decodes: ["files/delete_file"] }
      )
    }).pipe(Effect.provide(InMemoryMcp.layer({ "memory://files": server })))
  )
})
