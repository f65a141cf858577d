-- dynamo's PostgreSQL schema, version 1. Times are bigint nanoseconds since
-- the Unix epoch (UTC): the Badger store keeps nanoseconds and so must this
-- one, which timestamptz (microseconds) cannot. Ids use the "C" collation, so
-- listings sort byte-wise as the Badger store's do.

-- One row per resource id ever seen by a save, a poll state, a lease or a
-- registration: its latest version's metadata, the poller's state and lease,
-- and the tombstone of an unregistered resource. Saves and leases lock it.
create table dynamo_resources (
    id             text collate "C" primary key,
    url            text not null default '',
    created_ns     bigint not null default 0,  -- timestamp of the first kept-history version
    updated_ns     bigint not null default 0,  -- timestamp of the latest version
    latest_seq     bigint not null default 0,  -- 0: no version ever; seqs are never reused
    oldest_seq     bigint not null default 0,  -- oldest kept version
    versions       integer not null default 0, -- kept versions: latest_seq - oldest_seq + 1, or 0
    hash           bytea,                      -- schema.ContentHash of the latest version
    title          text not null default '',
    description    text not null default '',
    poll_state     bytea,                      -- the poller's opaque state
    due_ns         bigint,                     -- when the resource is next due (leases); null: now
    lease_owner    text,                       -- node holding the lease, null: none
    lease_until_ns bigint,
    gone           boolean not null default false -- unregistered: reads answer gone
);

-- One row per version.
create table dynamo_versions (
    resource_id text collate "C" not null references dynamo_resources (id) on delete cascade,
    seq         bigint not null,
    ts_ns       bigint not null,
    title       text not null,
    description text not null,
    items       integer not null,
    hash        bytea not null,
    document    text not null, -- schema.Marshal's XMLData (TOAST compresses it)
    primary key (resource_id, seq)
);

-- The item index: one row per item id of a resource's kept history, with
-- its latest content (from the newest version containing it).
create table dynamo_items (
    resource_id   text collate "C" not null references dynamo_resources (id) on delete cascade,
    item_id       text collate "C" not null,
    first_seen_ns bigint not null,  -- timestamp of the version it was first seen in
    first_seq     bigint not null,
    first_pos     integer not null, -- its position in that version
    last_seen_ns  bigint not null,
    last_seq      bigint not null,  -- newest version containing it
    idx           integer not null, -- its index in that version
    content       jsonb not null,   -- schema.Item without its index
    title_f       text not null,    -- schema.Fold of title, link and description,
    link_f        text not null,    -- for keyword queries
    description_f text not null,
    primary key (resource_id, item_id)
);
create index dynamo_items_newest on dynamo_items (resource_id, first_seen_ns desc, first_seq desc, first_pos);
create index dynamo_items_last_seq on dynamo_items (resource_id, last_seq);

-- Resources registered at run time.
create table dynamo_registrations (
    id            text collate "C" primary key,
    definition    bytea not null, -- JSON of a config.ResourceEntry, byte for byte
    registered_ns bigint,
    updated_ns    bigint
);

-- Politeness across nodes: when each host may next be requested.
create table dynamo_hosts (
    host             text collate "C" primary key,
    next_allowed_ns  bigint not null
);

---- create above / drop below ----

drop table dynamo_hosts;
drop table dynamo_registrations;
drop table dynamo_items;
drop table dynamo_versions;
drop table dynamo_resources;
