/**
 * Tool search: a catalog larger than the provider takes (its profile's `toolLimit`), or any catalog when the
 * turn asks (`toolSearch: true`), is offered as one search tool plus the tools the model has loaded with it in
 * this turn. A search ranks the catalog (names and descriptions, BM25 with prefix matching, on `minisearch`)
 * and loads the best matches for the rest of the turn; a call of a loaded tool runs like any other (the
 * pipeline's authority, approval and every other step). What the model is offered never passes the limit:
 * the search tool and, of the loaded tools, the first loaded that fit. The catalog is what the turn would
 * offer (already filtered by authority); a name never loaded is answered as any name never offered.
 */
import * as Effect from "effect/Effect"
import type MiniSearch from "minisearch"
import type { ActionTool } from "../../ActionTool.ts"
import type * as LanguageModel from "../../LanguageModel.ts"
import * as Lazy from "../lazy.ts"
import type * as Toolkit from "../tool/toolkit.ts"
import type { Turn } from "./context.ts"

/** The search tool's name, as the model is offered it. */
export const name = "tool_search"

/** The most tools one search loads. */
const maxPicked = 20
const defaultPicked = 5

const parameters: LanguageModel.JsonSchemaObject = {
  type: "object",
  properties: {
    query: { type: "string", description: "What the tool should do, in a few words" },
    limit: {
      type: "integer",
      minimum: 1,
      maximum: maxPicked,
      description: `How many tools to load (default ${defaultPicked})`
    }
  },
  required: ["query"]
}

const searchTool: ActionTool = {
  name,
  description:
    "Search the catalog of tools and load the best matches: they can then be called for the rest of this conversation turn. Call it first whenever the tool you need is not offered.",
  parameters,
  strict: false,
  action: name,
  approval: undefined
}

const MiniSearchModule = Lazy.make((): Promise<typeof import("minisearch")> => import("minisearch"))

// The tools each turn has loaded, in the order they were loaded.
const loadedByTurn = new WeakMap<object, Array<string>>()
// A catalog's index, made once per toolkit (the toolkit is rebuilt only when a list changes).
const indexes = new WeakMap<
  Toolkit.Toolkit,
  MiniSearch<{ readonly id: string; readonly name: string; readonly text: string }>
>()

/** Whether the turn offers `kit` through the search tool: asked for, or more tools than the provider takes. */
const searching = <R>(turn: Turn<R>, kit: Toolkit.Toolkit): boolean => {
  const asked = turn.settings.toolSearch
  if (asked !== undefined) return asked
  const limit = turn.model.profile?.toolLimit
  return limit !== undefined && kit.tools.length > limit
}

/**
 * What model call offers of `kit`: the kit itself, or (searching) the search tool and the tools loaded so far
 * in the turn, at most the provider's limit. Its `find` knows the search tool and the offered tools only.
 */
export const offered = <R>(turn: Turn<R>, kit: Toolkit.Toolkit): Toolkit.Toolkit => {
  if (!searching(turn, kit)) return kit
  const limit = turn.model.profile?.toolLimit ?? Number.POSITIVE_INFINITY
  const loaded = (loadedByTurn.get(turn) ?? [])
    .filter((tool) => kit.find(tool) !== undefined)
    .slice(0, Math.max(0, limit - 1))
  const kept = new Set(loaded)
  const tools = [searchTool, ...kit.tools.filter((tool) => kept.has(tool.name))]
  const forModel = tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: tool.strict
  }))
  const searchKit: Toolkit.Toolkit = {
    tools,
    forModel,
    excluded: kit.excluded,
    find: (called) => (called === name ? searchTool : kept.has(called) ? kit.find(called) : undefined)
  }
  catalogs.set(searchKit, kit)
  return searchKit
}

// The whole catalog behind a kit that offers the search tool.
const catalogs = new WeakMap<Toolkit.Toolkit, Toolkit.Toolkit>()

/** Whether a call of `kit` is the search tool's. */
export const isSearch = (kit: Toolkit.Toolkit, tool: ActionTool | undefined): boolean =>
  tool === searchTool && catalogs.has(kit)

const indexOf = (mini: typeof import("minisearch"), catalog: Toolkit.Toolkit) => {
  let index = indexes.get(catalog)
  if (index === undefined) {
    index = new mini.default<{ readonly id: string; readonly name: string; readonly text: string }>({
      fields: ["name", "text"],
      storeFields: ["name"],
      // Names are read as words too: `weather_get_forecast` is found by "forecast".
      tokenize: (text) => text.split(/[^\p{L}\p{N}]+/u).filter((word) => word.length > 0),
      searchOptions: { prefix: true, fuzzy: 0.2, boost: { name: 2 } }
    })
    index.addAll(catalog.tools.map((tool) => ({ id: tool.name, name: tool.name, text: tool.description })))
    indexes.set(catalog, index)
  }
  return index
}

/**
 * Answers a call of the search tool with `args` (`query`, `limit`): the best matches of the catalog, loaded for
 * the rest of the turn, as the tool message's text (JSON: each tool's name and description).
 */
export const search = <R>(
  turn: Turn<R>,
  kit: Toolkit.Toolkit,
  args: Readonly<Record<string, unknown>>
): Effect.Effect<string> => {
  const catalog = catalogs.get(kit)
  if (catalog === undefined) return Effect.succeed(JSON.stringify({ error: "tool search is not offered" }))
  const query = typeof args.query === "string" ? args.query.trim() : ""
  if (query === "")
    return Effect.succeed(JSON.stringify({ error: "query: give a few words saying what the tool should do" }))
  const limit =
    typeof args.limit === "number" && Number.isInteger(args.limit)
      ? Math.min(maxPicked, Math.max(1, args.limit))
      : defaultPicked
  return MiniSearchModule.use((mini) =>
    Effect.sync(() => {
      const found = indexOf(mini, catalog)
        .search(query)
        .slice(0, limit)
        .flatMap((hit) => {
          const tool = catalog.find(String(hit.id))
          return tool === undefined ? [] : [tool]
        })
      const loaded = loadedByTurn.get(turn) ?? []
      for (const tool of found) if (!loaded.includes(tool.name)) loaded.push(tool.name)
      loadedByTurn.set(turn, loaded)
      return JSON.stringify({
        loaded: found.map((tool) => ({ name: tool.name, description: tool.description })),
        note:
          found.length === 0
            ? "no tool matches; try other words"
            : "these tools can be called now, for the rest of this turn"
      })
    })
  )
}
