// Types of jigsaw-level (README.md): an abstract-level database.
import { AbstractLevel, AbstractDatabaseOptions, AbstractOpenOptions } from 'abstract-level'

export interface JigsawEngineOptions {
  /** Where the LSM tree lives: 'pmem' (default), 'hybrid' or 'disk'. */
  mode?: 'pmem' | 'hybrid' | 'disk'
  /** The pool file (pmem and hybrid mode); default: <location>/pool. */
  pmemPath?: string
  /** Bytes of the pool a new database creates (default 1 GiB). */
  poolSize?: number
  /** Hybrid mode: bytes of tables kept in pmem. */
  pmemBudget?: number
  /** Bytes of a memtable. */
  memtableSize?: number
  /** Bytes of a level's table (a pmem block or an SSD table file). */
  tableSize?: number
  /** @deprecated tableSize's old name. */
  blockSize?: number
  /** Bytes of the SSD block cache. */
  blockCacheSize?: number
  /** Stop at the first sign of damage (default true). */
  paranoidChecks?: boolean
  /** Compression of SSD table blocks written from now on: true is 'lz4' (default false). */
  compression?: boolean | 'none' | 'lz4' | 'zstd'
}

export interface JigsawDatabaseOptions<K, V> extends AbstractDatabaseOptions<K, V>, JigsawEngineOptions {}

export declare class JigsawLevel<KDefault = string, VDefault = string>
  extends AbstractLevel<string | Buffer | Uint8Array, KDefault, VDefault> {
  constructor (location: string, options?: JigsawDatabaseOptions<KDefault, VDefault>)
  get location (): string
  open (options?: AbstractOpenOptions): Promise<void>
  /** The engine's property text (include/jigsaw/db.h), or undefined. */
  getProperty (name: string): string | undefined
  /** Bytes the tables hold for keys in [start, end). */
  approximateSize (start: KDefault, end: KDefault, options?: { keyEncoding?: string }): Promise<number>
  /** Compacts the keys in [start, end] (null: unbounded). */
  compactRange (start: KDefault | null, end: KDefault | null, options?: { keyEncoding?: string }): Promise<void>
}

/** The engine's version, x.y.z. */
export declare const engineVersion: string
