import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as fc from "fast-check"
import type { Parameters } from "../../../src/internal/tool/jsonSchema.ts"
import * as Naming from "../../../src/internal/tool/naming.ts"
import * as Toolkit from "../../../src/internal/tool/toolkit.ts"

describe("Toolkit.build", () => {
  const entry = (key: string, parameters: Parameters = { type: "object" }): Toolkit.Entry => ({
    key,
    description: `the ${key} tool`,
    parameters
  })
  const names = (kit: Toolkit.Toolkit) => kit.tools.map((tool) => [tool.action, tool.name] as const)

  describe("C11: names valid for the API", () => {
    it("dots, slashes and other characters become underscores; valid names stay", () => {
      const kit = Toolkit.build([
        entry("calendar.respondToEvent"),
        entry("user-profile/update"),
        entry("hosting_restartNode.jsApplicationV1"),
        entry("get weather für Wien"),
        entry("already_valid-Name9")
      ])
      assert.deepStrictEqual(names(kit), [
        ["calendar.respondToEvent", "calendar_respondToEvent"],
        ["user-profile/update", "user-profile_update"],
        ["hosting_restartNode.jsApplicationV1", "hosting_restartNode_jsApplicationV1"],
        ["get weather für Wien", "get_weather_f_r_Wien"],
        ["already_valid-Name9", "already_valid-Name9"]
      ])
      assert.deepStrictEqual(kit.excluded, [])
      assert.strictEqual(kit.find("calendar_respondToEvent")?.action, "calendar.respondToEvent")
      assert.strictEqual(kit.find("user-profile_update")?.action, "user-profile/update")
      assert.strictEqual(kit.find("calendar.respondToEvent")?.action, undefined)
      assert.strictEqual(kit.find("read_file")?.action, undefined)
    })

    it("a 67-character name is cut to 64 with a stable hash of the original key", () => {
      const key = `srv_mcp_${"a".repeat(59)}`
      assert.strictEqual(key.length, 67)
      const kit = Toolkit.build([entry(key)])
      const name = kit.tools[0]?.name ?? ""
      assert.strictEqual(name.length, 64)
      assert.match(name, /^srv_mcp_a{47}_[0-9a-f]{8}$/)
      assert.strictEqual(name, Naming.modelName(key))
      assert.strictEqual(Toolkit.build([entry("other"), entry(key)]).tools[1]?.name, name)
      assert.strictEqual(kit.find(name)?.action, key)
    })

    it("a 64-character name is kept as is", () => {
      const key = "b".repeat(64)
      assert.strictEqual(Naming.modelName(key), key)
    })

    it("two long names sharing a 60-character prefix get distinct names", () => {
      const prefix = "p".repeat(60)
      const kit = Toolkit.build([entry(`${prefix}_alpha`), entry(`${prefix}_beta`)])
      const [a, b] = kit.tools.map((tool) => tool.name)
      assert.notStrictEqual(a, b)
      assert.strictEqual(kit.find(a ?? "")?.action, `${prefix}_alpha`)
      assert.strictEqual(kit.find(b ?? "")?.action, `${prefix}_beta`)
    })

    it("a.b and a_b collide after mapping and are resolved the same whatever the order", () => {
      const forward = Toolkit.build([entry("a.b"), entry("a_b")])
      const backward = Toolkit.build([entry("a_b"), entry("a.b")])
      const hashed = forward.tools[0]?.name ?? ""
      assert.match(hashed, /^a_b_[0-9a-f]{8}$/)
      assert.deepStrictEqual(names(forward), [
        ["a.b", hashed],
        ["a_b", "a_b"]
      ])
      assert.deepStrictEqual(names(backward), [
        ["a_b", "a_b"],
        ["a.b", hashed]
      ])
      assert.strictEqual(forward.find("a_b")?.action, "a_b")
      assert.strictEqual(forward.find(hashed)?.action, "a.b")
      assert.strictEqual(backward.find(hashed)?.action, "a.b")
    })

    it("when no key owns the clashing name, all of them are hashed", () => {
      const kit = Toolkit.build([entry("a.b"), entry("a/b"), entry("a b")])
      const [x, y, z] = kit.tools.map((tool) => tool.name)
      for (const name of [x, y, z]) assert.match(name ?? "", /^a_b_[0-9a-f]{8}$/)
      assert.strictEqual(new Set([x, y, z]).size, 3)
    })

    it("even keys whose 8-hex-digit hashes collide get distinct names, whatever the order", () => {
      // Pairs found by search: same FNV-1a hash, and the same name before the hash.
      const long = [`${"q".repeat(60)}93819`, `${"q".repeat(60)}682066`]
      const short = ["t/t/t.t.t.t.t/t/t/t.t/t/t/t.t.t/t/t/t/t/t/t/t", "t.t/t.t.t/t.t/t/t/t/t.t.t/t/t/t/t.t/t/t/t/t/t"]
      for (const keys of [long, short]) {
        const forward = Toolkit.build(keys.map((key) => entry(key)))
        const backward = Toolkit.build([...keys].reverse().map((key) => entry(key)))
        const [a, b] = forward.tools.map((tool) => tool.name)
        assert.notStrictEqual(a, b)
        assert.deepStrictEqual(
          backward.tools.map((tool) => tool.name),
          [b, a]
        )
        for (const tool of forward.tools) {
          assert.match(tool.name, /^[a-zA-Z0-9_-]{1,64}$/)
          assert.strictEqual(forward.find(tool.name)?.action, tool.action)
        }
      }
    })

    it("one bad tool never breaks the others", () => {
      interface Node {
        readonly next: ReadonlyArray<Node>
      }
      const Node: Schema.Codec<Node> = Schema.Struct({
        next: Schema.Array(Schema.suspend((): Schema.Codec<Node> => Node))
      })
      const kit = Toolkit.build([
        entry("good"),
        entry("", { type: "object" }),
        entry("recursive", Node),
        entry("good"),
        entry("dangling", { type: "object", properties: { a: { $ref: "#/nope" } } }),
        entry("other", Schema.Struct({ q: Schema.String }))
      ])
      assert.deepStrictEqual(names(kit), [
        ["good", "good"],
        ["other", "other"]
      ])
      assert.deepStrictEqual(kit.excluded, [
        { key: "", reason: "the key is empty, so the tool has no name" },
        {
          key: "recursive",
          reason:
            'its parameters cannot be offered to a model: the schema is recursive: "#/$defs/Objects_" refers to itself (at properties.next.items)'
        },
        { key: "good", reason: 'the key "good" is offered twice; the first entry is kept' },
        {
          key: "dangling",
          reason: 'its parameters cannot be offered to a model: `$ref` "#/nope" points to nothing (at properties.a)'
        }
      ])
    })

    it("tools carry a name, description, projected parameters and strict, and where a call goes", () => {
      const kit = Toolkit.build([
        {
          key: "weather/get_forecast",
          description: "Get the forecast",
          parameters: { type: "object" },
          strict: true,
          action: "weather",
          tool: "get_forecast"
        },
        { key: "nights", description: "Count nights", parameters: Schema.Struct({ checkIn: Schema.String }) }
      ])
      assert.deepStrictEqual(
        kit.tools.map(({ name, action, tool, approval }) => ({ name, action, tool, approval })),
        [
          { name: "weather_get_forecast", action: "weather", tool: "get_forecast", approval: undefined },
          { name: "nights", action: "nights", tool: undefined, approval: undefined }
        ]
      )
      assert.deepStrictEqual(kit.forModel, [
        {
          name: "weather_get_forecast",
          description: "Get the forecast",
          parameters: { type: "object", properties: {}, required: [], additionalProperties: false },
          strict: true
        },
        {
          name: "nights",
          description: "Count nights",
          parameters: {
            type: "object",
            properties: { checkIn: { type: "string" } },
            required: ["checkIn"]
          },
          strict: false
        }
      ])
    })
  })

  describe("C12: the same tool name on two MCP servers", () => {
    it("namespaced keys become distinct names, each mapped back to its own server", () => {
      const kit = Toolkit.build([
        { key: "srv-a/send_email", description: "Send with A", parameters: { type: "object" } },
        { key: "srv-b/send_email", description: "Send with B", parameters: { type: "object" } }
      ])
      assert.deepStrictEqual(
        kit.tools.map((tool) => [tool.name, tool.description]),
        [
          ["srv-a_send_email", "Send with A"],
          ["srv-b_send_email", "Send with B"]
        ]
      )
      assert.strictEqual(kit.find("srv-a_send_email")?.action, "srv-a/send_email")
      assert.strictEqual(kit.find("srv-b_send_email")?.action, "srv-b/send_email")
    })

    it("srv-a/send_email and srv-a.send_email do not share a name", () => {
      const kit = Toolkit.build([entry("srv-a/send_email"), entry("srv-a.send_email")])
      const [a, b] = kit.tools.map((tool) => tool.name)
      assert.notStrictEqual(a, b)
      assert.strictEqual(kit.find(a ?? "")?.action, "srv-a/send_email")
      assert.strictEqual(kit.find(b ?? "")?.action, "srv-a.send_email")
    })
  })

  describe("properties", () => {
    const validName = /^[a-zA-Z0-9_-]{1,64}$/
    const keyArbitrary = fc.oneof(
      fc.string({ minLength: 1, maxLength: 90 }),
      fc.string({ minLength: 60, maxLength: 130 }),
      fc.stringMatching(/^p{58}[a-z.]{0,12}$/),
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 80 }),
      fc.stringMatching(/^[a-z./_ -]{1,70}$/)
    )

    it("any non-empty key maps to a name valid for the API", () => {
      fc.assert(
        fc.property(keyArbitrary, (key) => {
          assert.match(Naming.modelName(key), validName)
          const kit = Toolkit.build([entry(key)])
          assert.match(kit.tools[0]?.name ?? "", validName)
        })
      )
    })

    it("distinct keys get distinct valid names, find round-trips, and order does not matter", () => {
      fc.assert(
        fc.property(
          fc
            .uniqueArray(keyArbitrary, { minLength: 1, maxLength: 12 })
            .chain((keys) =>
              fc.tuple(fc.constant(keys), fc.shuffledSubarray(keys, { minLength: keys.length, maxLength: keys.length }))
            ),
          ([keys, shuffled]) => {
            const kit = Toolkit.build(keys.map((key) => entry(key)))
            assert.strictEqual(kit.tools.length, keys.length)
            const toolNames = kit.tools.map((tool) => tool.name)
            assert.strictEqual(new Set(toolNames).size, keys.length)
            for (const tool of kit.tools) {
              assert.match(tool.name, validName)
              assert.strictEqual(kit.find(tool.name)?.action, tool.action)
            }
            const nameOf = new Map(kit.tools.map((tool) => [tool.action, tool.name]))
            const other = Toolkit.build(shuffled.map((key) => entry(key)))
            for (const tool of other.tools) assert.strictEqual(tool.name, nameOf.get(tool.action))
          }
        )
      )
    })

    it("clash-prone keys (same characters up to . / _) still get distinct names", () => {
      fc.assert(
        fc.property(fc.uniqueArray(fc.stringMatching(/^[ab][._/][ab]$/), { minLength: 2, maxLength: 8 }), (keys) => {
          const kit = Toolkit.build(keys.map((key) => entry(key)))
          assert.strictEqual(new Set(kit.tools.map((tool) => tool.name)).size, keys.length)
          for (const tool of kit.tools) assert.strictEqual(kit.find(tool.name)?.action, tool.action)
        })
      )
    })
  })
})

describe("Toolkit.offer", () => {
  const tool = (name: string, description?: string) => ({
    name,
    ...(description === undefined ? {} : { description }),
    inputSchema: { type: "object" }
  })
  const route = (kit: Toolkit.Toolkit, name: string) => {
    const found = kit.find(name)
    return found === undefined
      ? undefined
      : { action: found.action, ...(found.tool === undefined ? {} : { tool: found.tool }) }
  }

  it.effect("C12: the same tool on two servers gets two names, each routed back to its own server", () =>
    Effect.gen(function* () {
      const kit = yield* Toolkit.offer([
        { action: "srv-a", tools: [tool("send_email", "Send through A")] },
        { action: "srv-b", tools: [tool("send_email", "Send through B")] }
      ])
      assert.deepStrictEqual(
        kit.tools.map((entry) => [entry.name, entry.description]),
        [
          ["srv-a_send_email", "Send through A"],
          ["srv-b_send_email", "Send through B"]
        ]
      )
      assert.deepStrictEqual(route(kit, "srv-b_send_email"), { action: "srv-b", tool: "send_email" })
      assert.isUndefined(route(kit, "send_email"))
    })
  )

  it.effect("C11: dots, slashes and names past 64 characters become valid, distinct names", () =>
    Effect.gen(function* () {
      const long = `hosting_${"x".repeat(70)}`
      const kit = yield* Toolkit.offer([
        {
          action: "cal",
          tools: [tool("calendar.respondToEvent"), tool("calendar_respondToEvent"), tool("user-profile/update")]
        },
        { action: "host", tools: [tool(long), tool(`${long}2`)] }
      ])
      const names = kit.tools.map((entry) => entry.name)
      assert.strictEqual(new Set(names).size, 5)
      for (const name of names) assert.match(name, /^[a-zA-Z0-9_-]{1,64}$/)
      assert.deepStrictEqual(
        kit.tools.map((entry) => route(kit, entry.name)?.tool),
        ["calendar.respondToEvent", "calendar_respondToEvent", "user-profile/update", long, `${long}2`]
      )
    })
  )

  it.effect(
    "C07: an object schema without properties is offered with properties {}; the description has a default",
    () =>
      Effect.gen(function* () {
        const kit = yield* Toolkit.offer([{ action: "go", tools: [tool("get_server_version")] }])
        assert.deepStrictEqual(kit.tools[0]?.parameters, { type: "object", properties: {} })
        assert.strictEqual(kit.tools[0]?.description, "get_server_version (MCP tool of go)")
      })
  )

  it.effect("actions offered alongside get names unique across actions and MCP tools, each routed to its own", () =>
    Effect.gen(function* () {
      const kit = yield* Toolkit.offer([{ action: "srv-a", tools: [tool("send_email", "Send through A")] }], {
        actions: [{ key: "srv-a_send_email", description: "A local action", parameters: { type: "object" } }]
      })
      const [action, mcp] = kit.tools
      assert.strictEqual(action?.name, "srv-a_send_email")
      assert.match(mcp?.name ?? "", /^srv-a_send_email_[0-9a-f]{8}$/)
      assert.deepStrictEqual(route(kit, action?.name ?? ""), { action: "srv-a_send_email" })
      assert.deepStrictEqual(route(kit, mcp?.name ?? ""), { action: "srv-a", tool: "send_email" })
    })
  )
})
