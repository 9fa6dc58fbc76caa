/**
 * One tool-result writer: an agent served over MCP (`Mcp.serve`) and a chat
 * turn of the same agent answer a tool call with the same text — for a
 * bigint, a Map, a Set and a Date, and for a cycle the same EXECUTION
 * failure naming where it closes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Action, Agent, type Prompt, Role } from "@rolecraft/core"
import { Mcp } from "@rolecraft/mcp"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect } from "effect"

const cyclic = () => {
  const value: Record<string, unknown> = { a: 1 }
  value.self = value
  return value
}

// Each action returns a value JSON.stringify cannot write as it is.
const results: ReadonlyArray<readonly [string, () => unknown, string]> = [
  ["bigint", () => ({ n: 12n }), '{"n":"12"}'],
  ["map", () => new Map([["a", 1]]), '{"a":1}'],
  ["set", () => new Set([1, 2]), "[1,2]"],
  ["date", () => new Date("2026-11-02T15:00:00.000Z"), '"2026-11-02T15:00:00.000Z"'],
  [
    "cycle",
    cyclic,
    '{"error":{"category":"EXECUTION","message":"cycle: the result cannot be serialised: the value refers to itself at $.self"}}'
  ]
]

const role = Role.make({
  identity: { name: "values", goal: "Return values", domain: "test" },
  actions: Object.fromEntries(
    results.map(([name, run]) => [name, Action.local({ description: `Returns a ${name}`, parameters: {}, run })])
  )
})

const toolContents = (messages: ReadonlyArray<Prompt.Message>) =>
  messages.flatMap((message) => (message.role === "tool" ? [message.content] : []))

describe("one tool-result writer", () => {
  it.live("Mcp.serve and a chat turn write the same text for a bigint, a Map, a Set, a Date and a cycle", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "values", roles: [role] })

      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls(results.map(([name]) => ({ name }))),
        ScriptedModel.reply("done")
      ])
      const chat = yield* agent.chat("Return each value", { concurrency: 1 }).pipe(Effect.provide(scripted.layer))
      assert.strictEqual(chat._tag, "Completed")
      const chatTexts = toolContents(chat._tag === "Completed" ? chat.messages : [])

      const served = yield* Mcp.serve(agent, { transport: { http: {} } })
      const client = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new Client({ name: "tool-result-test", version: "1.0.0" })
          await client.connect(new StreamableHTTPClientTransport(new URL(served.url ?? "")))
          return client
        }),
        (client) => Effect.promise(() => client.close())
      )
      const mcpTexts: Array<string> = []
      const mcpErrors: Array<boolean> = []
      const structured: Array<unknown> = []
      for (const [name] of results) {
        const result = (yield* Effect.promise(() => client.callTool({ name, arguments: {} }))) as {
          readonly content: ReadonlyArray<{ readonly text?: string }>
          readonly isError?: boolean
          readonly structuredContent?: unknown
        }
        mcpTexts.push(result.content[0]?.text ?? "")
        mcpErrors.push(result.isError === true)
        structured.push(result.structuredContent)
      }

      assert.deepStrictEqual(
        chatTexts,
        results.map(([, , text]) => text)
      )
      assert.deepStrictEqual(mcpTexts, chatTexts)
      assert.deepStrictEqual(mcpErrors, [false, false, false, false, true])
      // An object result's structuredContent is the JSON of the same text.
      assert.deepStrictEqual(structured, [{ n: "12" }, undefined, undefined, undefined, undefined])
    }).pipe(Effect.scoped)
  )
})
