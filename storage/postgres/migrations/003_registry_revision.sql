-- Version 3: the registry's revision. Every Register and Unregister takes
-- the next revision by updating this one row in its transaction, so that
-- changes of the registry commit one at a time, in revision order, and a
-- read of the registry with this row (one statement) sees exactly the
-- changes up to the revision it reads. A node compares revisions so that a
-- read taken before its own change committed cannot undo that change.
create table dynamo_registry_revision (
    singleton boolean primary key default true check (singleton),
    revision  bigint not null
);
insert into dynamo_registry_revision (singleton, revision) values (true, 0);

-- The revision of each registration's last change, and the deletions with
-- theirs (until the id is registered again), so that a node reads only
-- what changed since the revision it holds.
alter table dynamo_registrations add column revision bigint not null default 0;
create index dynamo_registrations_revision on dynamo_registrations (revision);
create table dynamo_registry_deletions (
    id       text collate "C" primary key,
    revision bigint not null
);
create index dynamo_registry_deletions_revision on dynamo_registry_deletions (revision);

---- create above / drop below ----

drop table dynamo_registry_deletions;
drop index dynamo_registrations_revision;
alter table dynamo_registrations drop column revision;
drop table dynamo_registry_revision;
