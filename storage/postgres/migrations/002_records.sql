-- Version 2: the records of features built on the store (the WebSub hub's
-- subscriptions and pending deliveries), shared by every node. Values are
-- opaque to the store; updates lock the row (SELECT … FOR UPDATE).
create table dynamo_records (
    kind  text collate "C" not null,
    key   text collate "C" not null,
    value bytea,            -- null while an update is creating the row
    primary key (kind, key)
);
