import { assert, describe, it } from "@effect/vitest"
import { Exit, Schema } from "effect"
import * as Prompt from "../src/Prompt.ts"

describe("Prompt.Message", () => {
  it("decodes a chat history and names what is wrong in a bad one", () => {
    const history: ReadonlyArray<Prompt.Message> = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Nights?" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "nights", arguments: '{"a":1}' }] },
      { role: "tool", toolCallId: "c1", content: "3" },
      { role: "assistant", content: "Three nights." }
    ]
    assert.deepStrictEqual(Schema.decodeUnknownSync(Schema.Array(Prompt.Message))(history), history)
    const bad = Schema.decodeUnknownExit(Schema.Array(Prompt.Message))([{ role: "tool", content: "3" }])
    assert.isTrue(Exit.isFailure(bad))
  })
})
