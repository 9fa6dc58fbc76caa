/**
 * mcpTool actions against the published server-filesystem over stdio: tools
 * with output schemas (structured results), a refusal (`isError`), and array
 * arguments sent as JSON text.
 */
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, layer } from "@effect/vitest"
import { Action, Agent, type McpClient, Role } from "@rolecraft/core"
import { McpClientSdk } from "@rolecraft/mcp"
import { Context, Effect, Layer } from "effect"
import { filesystem } from "./fixtures/mcp.ts"

const root = realpathSync(mkdtempSync(join(tmpdir(), "rolecraft-fs-")))
writeFileSync(join(root, "notes.txt"), "first line\nsecond line\n")

const Files = Role.make({
  identity: { name: "archivist", goal: "Keep notes", domain: "files" },
  actions: { files: Action.mcpTool({ description: "Files in the notes folder", server: filesystem(root) }) }
})

class Archivist extends Context.Service<Archivist, Agent.Agent<any, McpClient.McpClient>>()("test/Archivist") {}

const Shared = Layer.effect(Archivist, Agent.make({ id: "archivist", roles: [Files] })).pipe(
  Layer.provideMerge(McpClientSdk.layer())
)

layer(Shared, { excludeTestServices: true })("server-filesystem over stdio", (it) => {
  it.effect("a tool with an output schema gives its structured content; writes and lists go through", () =>
    Effect.gen(function* () {
      const agent = yield* Archivist
      const read = yield* agent.executeAction("files", {
        tool: "read_text_file",
        arguments: { path: join(root, "notes.txt"), head: "1" }
      })
      assert.deepStrictEqual(read, { content: "first line" })
      yield* agent.executeAction("files", {
        tool: "write_file",
        arguments: { path: join(root, "b.txt"), content: "B" }
      })
      const listing = (yield* agent.executeAction("files", { tool: "list_directory", arguments: { path: root } })) as {
        readonly content: string
      }
      assert.include(listing.content, "[FILE] b.txt")
      assert.include(listing.content, "[FILE] notes.txt")
    })
  )

  it.effect("a refusal by the tool (isError) is EXECUTION carrying the tool's text", () =>
    Effect.gen(function* () {
      const agent = yield* Archivist
      const error = yield* Effect.flip(
        agent.executeAction("files", { tool: "read_text_file", arguments: { path: "/etc/hostname" } })
      )
      assert.strictEqual(error._tag, "ExecutionFailure")
      if (error._tag !== "ExecutionFailure") return
      assert.include(error.message, "files/read_text_file: the tool reported an error: Access denied")
      assert.include(error.excerpt ?? "", "path outside allowed directories")
      assert.isFalse(error.retryable)
    })
  )

  it.effect("an array argument sent as JSON text is decoded once against the tool's schema", () =>
    Effect.gen(function* () {
      const agent = yield* Archivist
      const both = (yield* agent.executeAction("files", {
        tool: "read_multiple_files",
        arguments: { paths: JSON.stringify([join(root, "notes.txt"), join(root, "b.txt")]) }
      })) as { readonly content: string }
      assert.include(both.content, "second line")
      assert.include(both.content, "B")
    })
  )
})
