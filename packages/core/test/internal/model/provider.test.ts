import { assert, describe, it } from "@effect/vitest"
import * as Provider from "../../../src/internal/model/provider.ts"

describe("normalise", () => {
  it("normalises a provider's answer: null text, missing usage counts, total and finish reason", () => {
    const answers: Array<Provider.ProviderResponse> = [
      { text: null, usage: { inputTokens: 7 } },
      { text: "hi", usage: { inputTokens: 2, outputTokens: 3, totalTokens: 9 }, finishReason: "length" },
      { toolCalls: [{ id: "c1", name: "nights", arguments: "" }], usage: null },
      { text: "x", usage: { inputTokens: Number.NaN, outputTokens: -4 }, finishReason: "function_call" }
    ]
    const got = answers.map((answer) => Provider.normalise("ask", answer))
    assert.deepStrictEqual(got, [
      {
        text: "",
        toolCalls: [],
        usage: { inputTokens: 7, outputTokens: 0, totalTokens: 7 },
        finishReason: "stop"
      },
      {
        text: "hi",
        toolCalls: [],
        usage: { inputTokens: 2, outputTokens: 3, totalTokens: 9 },
        finishReason: "length"
      },
      {
        text: "",
        toolCalls: [{ id: "c1", name: "nights", arguments: "" }],
        usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
        finishReason: "tool_calls"
      },
      {
        text: "x",
        toolCalls: [],
        usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
        finishReason: "other"
      }
    ])
  })
})
