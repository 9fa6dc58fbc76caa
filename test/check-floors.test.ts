/**
 * The floors check of `internal/` (scripts/check-floors.ts): an import that runs up a floor, or sideways to
 * another folder of the same floor, is found whatever its form (a static import, a type import, an
 * `export … from`, a dynamic `import()`); imports down and within a folder pass; a folder with no floor fails.
 */
import { assert, describe, it } from "@effect/vitest"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { check } from "../scripts/check-floors.ts"

/** A package's `src/` of the given files (paths under `internal/`), checked on `table`, then removed. */
const checked = (files: Record<string, string>, table: ReadonlyArray<ReadonlyArray<string>>) => {
  const src = mkdtempSync(join(tmpdir(), "floors-"))
  try {
    for (const [path, text] of Object.entries(files)) {
      const full = join(src, "internal", path)
      mkdirSync(dirname(full), { recursive: true })
      writeFileSync(full, text)
    }
    return check("fixture", src, table).map((problem) => problem.message)
  } finally {
    rmSync(src, { recursive: true, force: true })
  }
}

const table = [["."], ["tool", "events"], ["pipeline"], ["chat"]]

describe("no import inside internal/ runs up a floor", () => {
  it("imports down a floor, within a folder and to the public modules pass", () => {
    assert.deepStrictEqual(
      checked(
        {
          "json.ts": "export const a = 1\n",
          "text.ts": 'import { a } from "./json.ts"\nexport const b = a\n',
          "tool/naming.ts":
            'import { a } from "../json.ts"\nimport type { X } from "../../Public.ts"\nexport const c = a\n',
          "tool/toolkit.ts": 'import { c } from "./naming.ts"\nexport const d = c\n',
          "pipeline/run.ts": 'import { d } from "../tool/toolkit.ts"\nexport * from "../events/hub.ts"\n',
          "events/hub.ts": "export const e = 1\n",
          "chat/turn.ts": 'const m = () => import("../pipeline/run.ts")\nexport { m }\n'
        },
        table
      ),
      []
    )
  })

  const cases: ReadonlyArray<readonly [string, Record<string, string>, string]> = [
    [
      "a static import",
      { "pipeline/run.ts": 'import { x } from "../chat/turn.ts"\n', "chat/turn.ts": "export const x = 1\n" },
      "internal/pipeline (floor 2) imports internal/chat, on floor 3 above it"
    ],
    [
      "a type import",
      { "tool/toolkit.ts": 'import type { R } from "../pipeline/run.ts"\n', "pipeline/run.ts": "export type R = 1\n" },
      "internal/tool (floor 1) imports internal/pipeline, on floor 2 above it"
    ],
    [
      "an export … from",
      { "json.ts": 'export { y } from "./tool/naming.ts"\n', "tool/naming.ts": "export const y = 1\n" },
      "internal/. (floor 0) imports internal/tool, on floor 1 above it"
    ],
    [
      "a dynamic import",
      { "tool/toolkit.ts": 'const m = () => import("../chat/turn.ts")\n', "chat/turn.ts": "export const x = 1\n" },
      "internal/tool (floor 1) imports internal/chat, on floor 3 above it"
    ],
    [
      "another folder of the same floor",
      { "tool/toolkit.ts": 'import { e } from "../events/hub.ts"\n', "events/hub.ts": "export const e = 1\n" },
      "internal/tool imports internal/events, another folder on its floor (1)"
    ],
    [
      "a folder with no floor",
      { "extra/thing.ts": "export const z = 1\n" },
      "internal/extra of fixture has no floor: give it one in scripts/check-floors.ts"
    ]
  ]
  for (const [form, files, message] of cases) {
    it(`finds ${form}`, () => {
      assert.deepStrictEqual(checked(files, table), [message])
    })
  }
})
