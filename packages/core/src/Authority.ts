/**
 * The allow and deny lists an agent is given.
 *
 * @since 0.1.0
 */
export interface Authority {
  readonly allow?: ReadonlyArray<string> | undefined
  readonly deny?: ReadonlyArray<string> | undefined
}
