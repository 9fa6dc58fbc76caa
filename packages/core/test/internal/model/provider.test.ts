import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Finish from "../../../src/internal/model/finish.ts"
import * as Provider from "../../../src/internal/model/provider.ts"
import type * as ModelResponse from "../../../src/ModelResponse.ts"

describe("normalise", () => {
  it("normalises a provider's answer: null text, missing usage counts, total and finish reason", () => {
    const answers: Array<ModelResponse.ProviderResponse> = [
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

describe("finish reasons", () => {
  it("every name providers give a reply cut at its token limit reads as length, in any case", () => {
    const table: ReadonlyArray<readonly [unknown, ModelResponse.FinishReason | undefined]> = [
      ["length", "length"],
      ["LENGTH", "length"],
      ["max_tokens", "length"],
      ["MAX_TOKENS", "length"],
      ["max_output_tokens", "length"],
      ["model_length", "length"],
      ["model_context_window_exceeded", "length"],
      ["stop", "stop"],
      ["STOP", "stop"],
      ["tool_calls", "tool_calls"],
      ["content_filter", "content_filter"],
      ["end_of_world", "other"],
      ["", undefined],
      [null, undefined],
      [undefined, undefined],
      [3, undefined]
    ]
    assert.deepStrictEqual(
      table.map(([reason]) => Provider.finishReasonOf(reason)),
      table.map(([, expected]) => expected)
    )
  })

  it("a reply that used exactly maxTokens output tokens is cut, whatever its reason says", () => {
    const answer = (outputTokens: number, finishReason: ModelResponse.FinishReason): ModelResponse.Response => ({
      text: "",
      toolCalls: [],
      usage: { inputTokens: 1, outputTokens, totalTokens: outputTokens + 1 },
      finishReason
    })
    assert.strictEqual(Provider.capped(answer(40, "tool_calls"), 40).finishReason, "length")
    assert.strictEqual(Provider.capped(answer(40, "stop"), 40).finishReason, "length")
    assert.strictEqual(Provider.capped(answer(39, "tool_calls"), 40).finishReason, "tool_calls")
    assert.strictEqual(Provider.capped(answer(40, "tool_calls"), undefined).finishReason, "tool_calls")
  })
})

describe("finish reasons: property", () => {
  const cutNames = ["length", "max_tokens", "max_output_tokens", "model_length", "model_context_window_exceeded"]
  /** A name in any mix of upper and lower case. */
  const anyCase = (name: string) =>
    fc
      .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
      .map((upper) => Array.from(name, (c, i) => (upper[i] ? c.toUpperCase() : c)).join(""))

  it("a cut reply read from any provider's name for it, in any case, is length; its calls never count as finished", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...cutNames).chain(anyCase),
        fc.array(fc.record({ id: fc.string(), name: fc.string(), arguments: fc.string() }), { maxLength: 3 }),
        (finishReason, toolCalls) => {
          const response = Provider.normalise("ask", { finishReason, toolCalls })
          assert.isFalse(response instanceof Error)
          assert.strictEqual((response as ModelResponse.Response).finishReason, "length", finishReason)
          const stopped = Finish.unfinished("ask", response as ModelResponse.Response, { toolCalls: toolCalls.length })
          if (toolCalls.length === 0) assert.isUndefined(stopped)
          else assert.include(stopped?.message ?? "", "max_tokens")
        }
      )
    )
  })
})
