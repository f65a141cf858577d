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

---- create above / drop below ----

drop table dynamo_registry_revision;
