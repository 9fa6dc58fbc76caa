/**
 * The docs-fields check (scripts/check-doc-fields.ts): a table marked with its module names only fields its types
 * have — a planted field that the type lacks fails with its file and line, in each of the three forms (a type's
 * fields column, a call's options, an options table); a type it cannot read fails too; and the repository's own
 * docs pass.
 */
import { assert, describe, it } from "@effect/vitest"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { check, checkMarkdown } from "../scripts/check-doc-fields.ts"

const module = `
import type { Usage } from "./usage.ts"
export interface Base { readonly step: number }
export interface Started extends Base { readonly _tag: "Started"; readonly toolCallId: string; readonly tool: string }
export type Ready = Base & { readonly action: string; readonly usage?: Usage | undefined }
export interface Options { readonly maxSteps?: number; readonly system?: string }
export const reply = (text: string, options?: { readonly usage?: Usage; readonly model?: string }) => text
export function calls(list: ReadonlyArray<Call>, options?: Options) { return list }
interface Call { readonly name: string; readonly id?: string }
export type { Usage as WireUsage } from "./usage.ts"
`

/** The problems of `markdown` against a module (src/events.ts) and what it imports, as `line message`. */
const problems = (markdown: string): ReadonlyArray<string> => {
  const base = mkdtempSync(join(tmpdir(), "doc-fields-"))
  try {
    const files: Record<string, string> = {
      "src/events.ts": module,
      "src/usage.ts": "export interface Usage { readonly prompt_tokens?: number }\n",
      "docs/page.md": markdown
    }
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(base, path)), { recursive: true })
      writeFileSync(join(base, path), text)
    }
    return checkMarkdown(join(base, "docs/page.md"), markdown, base).map(
      (problem) => `${problem.line} ${problem.message}`
    )
  } finally {
    rmSync(base, { recursive: true, force: true })
  }
}

const table = (marker: string, header: string, rows: ReadonlyArray<string>) =>
  [`<!-- fields: ${marker} -->`, "", header, header.replace(/[^|]/g, "-"), ...rows, ""].join("\n")

describe("docs tables name only fields their types have", () => {
  it("a table whose fields are all there passes, in each form", () => {
    assert.deepStrictEqual(
      problems(
        [
          table("src/events.ts", "| event | fields | when |", [
            "| `Started` | `step`, `toolCallId`, `tool` | a call began |",
            "| `Ready` | `step`, `action`, `usage` | its arguments are parsed |"
          ]),
          table("src/events.ts", "| step | answers |", [
            "| `reply(text, { usage?, model? })` | a completion |",
            "| `calls([{ name, id? }], { maxSteps? })` | tool calls |"
          ]),
          table("src/events.ts#Options", "| option | meaning |", ["| `maxSteps`, `system` | limits |"])
        ].join("\n")
      ),
      []
    )
  })

  const planted: ReadonlyArray<readonly [string, string, ReadonlyArray<string>]> = [
    [
      "a type's fields column (the id and tool name the chat docs once named)",
      table("src/events.ts", "| event | fields | when |", ["| `Started` | `step`, `id`, `name` | a call began |"]),
      [
        '5 Started has no field "id" (it has toolCallId, tool, step)',
        '5 Started has no field "name" (it has toolCallId, tool, step)'
      ]
    ],
    [
      "a field of an intersection's part",
      table("src/events.ts", "| event | fields | when |", ["| `Ready` | `tool` | parsed |"]),
      ['5 Ready has no field "tool" (it has step, action, usage)']
    ],
    [
      "a call's options",
      table("src/events.ts", "| step | answers |", ["| `reply(text, { usage?, inputTokens? })` | a completion |"]),
      ['5 reply\'s options has no field "inputTokens" (it has usage, model)']
    ],
    [
      "a list of records",
      table("src/events.ts", "| step | answers |", ["| `calls([{ name, arguments? }])` | calls |"]),
      ['5 calls\'s list has no field "arguments" (it has name, id)']
    ],
    [
      "an options table",
      table("src/events.ts#Options", "| option | meaning |", ["| `maxSteps`, `temperature` | limits |"]),
      ['5 Options has no field "temperature" (it has maxSteps, system)']
    ],
    [
      "a type or function the module does not have",
      table("src/events.ts", "| event | fields | when |", [
        "| `Finished` | `step` | done |",
        "| `stream(x, { a? })` | x |"
      ]),
      ["5 Finished is not a type of src/events.ts", "6 stream is not a function of src/events.ts"]
    ],
    [
      "a module that does not exist",
      table("src/gone.ts", "| event | fields |", ["| `Started` | `step` |"]),
      ["1 the module src/gone.ts does not exist"]
    ]
  ]
  for (const [form, markdown, expected] of planted) {
    it(`a planted mistake fails with its line: ${form}`, () => {
      assert.deepStrictEqual(problems(markdown), expected)
    })
  }

  it("the repository's docs pass", () => {
    assert.deepStrictEqual(check(), [])
  })
})
