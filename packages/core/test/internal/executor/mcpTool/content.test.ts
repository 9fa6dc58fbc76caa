import { assert, describe, it } from "@effect/vitest"
import * as McpContent from "../../../../src/internal/executor/mcpTool/content.ts"

const base64 = (bytes: number) => Buffer.alloc(bytes, 7).toString("base64")

describe("McpContent", () => {
  it("structuredContent wins when there is no outputSchema or it satisfies it", () => {
    const result = { content: [{ type: "text", text: '{"a":1}' }], structuredContent: { a: 1 } }
    assert.deepStrictEqual(McpContent.toValue(result), { a: 1 })
    const schema = { type: "object", properties: { a: { type: "integer" } }, required: ["a"] }
    assert.deepStrictEqual(McpContent.toValue(result, { outputSchema: schema }), { a: 1 })
    const broken = { content: [{ type: "text", text: "a is one" }], structuredContent: { a: "one" } }
    assert.strictEqual(McpContent.toValue(broken, { outputSchema: schema }), "a is one")
  })

  it("text blocks are joined; no content at all is null", () => {
    assert.strictEqual(
      McpContent.toValue({
        content: [
          { type: "text", text: "one" },
          { type: "text", text: "two" }
        ]
      }),
      "one\ntwo"
    )
    assert.strictEqual(McpContent.toValue({ content: [] }), null)
  })

  it.each([
    [{ type: "image", data: base64(300 * 1024), mimeType: "image/png" }, "[image image/png, 300 KB]"],
    [{ type: "audio", data: base64(512), mimeType: "audio/wav" }, "[audio audio/wav, 512 B]"],
    [
      { type: "image", data: base64(3 * 1024 * 1024 + 512 * 1024), mimeType: "image/jpeg" },
      "[image image/jpeg, 3.5 MB]"
    ],
    [
      { type: "resource", resource: { uri: "file:///r.md", mimeType: "text/markdown", text: "# R" } },
      "file:///r.md\n# R"
    ],
    [
      { type: "resource", resource: { uri: "file:///x.bin", blob: base64(2048) } },
      "[resource file:///x.bin application/octet-stream, 2 KB]"
    ],
    [
      { type: "resource_link", uri: "reports://q3", name: "q3.pdf", mimeType: "application/pdf" },
      "[resource link q3.pdf reports://q3 application/pdf]"
    ],
    [{ type: "resource_link", uri: "reports://q4" }, "[resource link reports://q4 reports://q4]"],
    [{ type: "hologram", data: "AAAA" }, "[unsupported content hologram]"],
    [{ type: "resource" }, "[resource without contents]"]
  ])("the block %j reads as %s, without its base64", (block, expected) => {
    const part = McpContent.toPart(block)
    assert.strictEqual(part.text, expected)
    assert.notInclude(JSON.stringify(part), "BwcH")
  })

  it("one unsupported block never discards the others", () => {
    const value = McpContent.toValue({
      content: [{ type: "text", text: "before" }, { type: "hologram" }, { type: "text", text: "after" }]
    })
    assert.deepStrictEqual(value, [
      { type: "text", text: "before" },
      { type: "hologram", text: "[unsupported content hologram]" },
      { type: "text", text: "after" }
    ])
  })

  it("the total size is bounded, and says how much was left out", () => {
    const long = McpContent.toValue({ content: [{ type: "text", text: "x".repeat(150) }] }, { maxLength: 100 })
    assert.strictEqual(long, `${"x".repeat(100)}\n[truncated: 50 more characters]`)
    const parts = McpContent.toValue(
      {
        content: [
          { type: "text", text: "a".repeat(60) },
          { type: "image", data: base64(10), mimeType: "image/png" },
          { type: "text", text: "b".repeat(60) },
          { type: "text", text: "c" },
          { type: "text", text: "d" }
        ]
      },
      { maxLength: 100 }
    ) as ReadonlyArray<{ readonly text: string }>
    assert.deepStrictEqual(
      parts.map((part) => part.text.slice(0, 12)),
      ["a".repeat(12), "[image image", "b".repeat(12), "[truncated: "]
    )
    assert.strictEqual(parts[3]?.text, "[truncated: 2 more parts]")
  })

  it("toText gives a tool error's text for messages", () => {
    assert.strictEqual(
      McpContent.toText({
        content: [
          { type: "text", text: "Access denied" },
          { type: "image", data: base64(4), mimeType: "image/png" }
        ]
      }),
      "Access denied\n[image image/png, 4 B]"
    )
  })
})
