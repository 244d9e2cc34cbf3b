/*
 * A numbered release as it travels (docs/api.md "Releases"): what POST /releases answers, what
 * GET /releases and GET /releases/{n} describe, a manifest's entries. Imported by the server's
 * answers, the SDK, the CLI and the portal; imports nothing.
 */

/** `early-release`: files made public ahead of the mission's usual schedule. */
export const RELEASE_KINDS = ['release', 'early-release'] as const;
export type ReleaseKind = (typeof RELEASE_KINDS)[number];

/** `scheduled` until its date, then `published`; `retracted` once a curator retracts it. */
export type ReleaseStatus = 'scheduled' | 'published' | 'retracted';

/** One file of a manifest, as it was when the release was made. */
export interface ManifestEntry {
  readonly file_path: string;
  readonly size: number;
  readonly sha256: string;
}

/** What describes a release wherever it is held: the request made, the row kept, the answer sent. */
export interface ReleaseFacts {
  readonly title: string;
  readonly description?: string;
  readonly kind: ReleaseKind;
  /** When its files became, or become, public, ISO-8601 UTC. */
  readonly release_date: string;
  readonly created_by: string;
  readonly created_at: string;
}

/** A release without its manifest (GET /releases lists these). */
export interface ReleaseSummary extends ReleaseFacts {
  readonly release: number;
  readonly status: ReleaseStatus;
  readonly file_count: number;
  readonly bytes: number;
  readonly retracted_date?: string;
  readonly retracted_reason?: string;
  readonly retracted_by?: string;
}

/** GET /releases/{n}: the summary and its manifest, in file_path order. */
export interface ReleaseDescription extends ReleaseSummary {
  readonly files: readonly ManifestEntry[];
}

/** POST /releases's 201. */
export interface ReleaseCreated {
  readonly release: number;
  readonly files: number;
  readonly bytes: number;
  readonly release_date: string;
  readonly href: string;
}

/** GET /releases/{n}?format=: the description (json), or the manifest as CSV, Metalink, or DataCite JSON. */
export const RELEASE_FORMATS = ['json', 'csv', 'metalink', 'datacite'] as const;
export type ReleaseFormat = (typeof RELEASE_FORMATS)[number];

/** A release number in a path or parameter: a whole number from 1, at most nine digits. */
export const RELEASE_NUMBER_PATTERN = '^[1-9]\\d{0,8}$';
