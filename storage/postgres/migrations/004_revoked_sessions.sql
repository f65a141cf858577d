-- Version 4: browser sessions ended by a logout (storage.Sessions), so
-- that every node refuses a copy of the session's cookie. A row stays until
-- its session would have expired anyway (until, in nanoseconds since the
-- Unix epoch, as every time here); each revocation deletes the rows whose
-- until has passed, so the table holds at most one session lifetime of
-- logouts.
create table dynamo_revoked_sessions (
    id    text collate "C" primary key,
    until bigint not null
);
create index dynamo_revoked_sessions_until on dynamo_revoked_sessions (until);

---- create above / drop below ----

drop table dynamo_revoked_sessions;
