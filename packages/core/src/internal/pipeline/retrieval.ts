/**
 * The retrieval step of the pipeline: for an action with a retrieval policy, the passages
 * its query finds in the `KnowledgeBase` (the agent's default one unless a layer provides
 * another), handed to the action in its context; a failing search is a RetrievalFailure.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { RetrievalFailure } from "../../ActionError.ts"
import * as KnowledgeBase from "../../KnowledgeBase.ts"
import { type Passage, type Retrieval, defaultQuery } from "../../Knowledge.ts"

const none: ReadonlyArray<Passage> = []
const noSources: ReadonlyArray<string> = []

/**
 * What an agent uses when no `KnowledgeBase` is provided to a call: the one
 * provided where the agent is made, else an in-memory base of its own over
 * file and directory sources (`KnowledgeBase.makeFiles`), so each role's
 * sources are loaded once per agent.
 *
 * @since 0.1.0
 */
export const defaultBase: Effect.Effect<KnowledgeBase.KnowledgeBase["Service"]> = Effect.flatMap(
  Effect.serviceOption(KnowledgeBase.KnowledgeBase),
  Option.match({ onNone: () => KnowledgeBase.makeFiles, onSome: Effect.succeed })
)

/**
 * Step 6. Without a retrieval policy there is nothing to retrieve (no
 * service is read). With one, searches the role's `spec.knowledge` sources
 * for `topK` passages (default 5) matching `query(args)` (default
 * {@link defaultQuery}) through the `KnowledgeBase` provided to the call,
 * else `base` (the agent's own).
 *
 * Fails `RetrievalFailure` when a source cannot be loaded or the `query`
 * function throws.
 *
 * @since 0.1.0
 */
export const retrieve = (options: {
  readonly action: string
  readonly policy: Retrieval<any> | undefined
  readonly args: Readonly<Record<string, unknown>>
  readonly role: {
    readonly identity: { readonly name: string }
    readonly spec: { readonly knowledge?: ReadonlyArray<string> | undefined }
  }
  readonly base: KnowledgeBase.KnowledgeBase["Service"]
}): Effect.Effect<ReadonlyArray<Passage>, RetrievalFailure> => {
  const { policy, action } = options
  if (policy === undefined) return Effect.succeed(none)
  const query = policy.query
  let text: string
  if (query === undefined) {
    text = defaultQuery(options.args)
  } else {
    const asked = queryOf(action, query, options.args)
    if (typeof asked !== "string") return Effect.fail(asked)
    text = asked
  }
  const search = {
    action,
    role: options.role.identity.name,
    sources: options.role.spec.knowledge ?? noSources,
    text,
    topK: policy.topK ?? 5
  }
  return Effect.flatMap(Effect.serviceOption(KnowledgeBase.KnowledgeBase), (provided) =>
    (provided._tag === "Some" ? provided.value : options.base).search(search)
  )
}

/** Runs the user's query function; a throw is the step's failure. */
const queryOf = (
  action: string,
  query: (args: any) => string,
  args: Readonly<Record<string, unknown>>
): string | RetrievalFailure => {
  try {
    return String(query(args))
  } catch (cause) {
    return new RetrievalFailure({
      action,
      message: `${action}: the retrieval query failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      cause
    })
  }
}
