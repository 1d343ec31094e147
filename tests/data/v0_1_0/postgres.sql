--
-- PostgreSQL database dump
--

\restrict DIqpyBbso9Bt2zi8Ge10SMkOr00WWxrIQpT7DdiifERPjMtUjxN68lVsC7qXmyI

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: nineplan_creations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.nineplan_creations (
    request_id text NOT NULL,
    seq bigint NOT NULL,
    fingerprint text NOT NULL,
    session_name text NOT NULL
);


--
-- Name: nineplan_creations_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.nineplan_creations_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: nineplan_creations_seq_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.nineplan_creations_seq_seq OWNED BY public.nineplan_creations.seq;


--
-- Name: nineplan_plans; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.nineplan_plans (
    session_name text NOT NULL,
    id text NOT NULL,
    seq bigint NOT NULL,
    status text NOT NULL,
    queue_position bigint,
    goal text NOT NULL,
    context text NOT NULL,
    inputs text DEFAULT ''::text NOT NULL,
    outputs text DEFAULT ''::text NOT NULL,
    approach text NOT NULL,
    success_criteria text NOT NULL,
    notes text DEFAULT ''::text NOT NULL,
    outcome text,
    created_at timestamp with time zone NOT NULL,
    completed_at timestamp with time zone,
    search tsvector GENERATED ALWAYS AS (
CASE
    WHEN (status = 'completed'::text) THEN ((((setweight(to_tsvector('english'::regconfig, goal), 'B'::"char") || setweight(to_tsvector('english'::regconfig, context), 'C'::"char")) || setweight(to_tsvector('english'::regconfig, inputs), 'C'::"char")) || setweight(to_tsvector('english'::regconfig, outputs), 'A'::"char")) || setweight(to_tsvector('english'::regconfig, COALESCE(outcome, ''::text)), 'A'::"char"))
    ELSE NULL::tsvector
END) STORED,
    CONSTRAINT nineplan_plans_check CHECK (((status = 'queued'::text) = (queue_position IS NOT NULL))),
    CONSTRAINT nineplan_plans_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'active'::text, 'completed'::text, 'discarded'::text])))
);


--
-- Name: nineplan_plans_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.nineplan_plans_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: nineplan_plans_seq_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.nineplan_plans_seq_seq OWNED BY public.nineplan_plans.seq;


--
-- Name: nineplan_requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.nineplan_requests (
    session_name text NOT NULL,
    request_id text NOT NULL,
    seq bigint NOT NULL,
    fingerprint text NOT NULL,
    result text NOT NULL
);


--
-- Name: nineplan_requests_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.nineplan_requests_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: nineplan_requests_seq_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.nineplan_requests_seq_seq OWNED BY public.nineplan_requests.seq;


--
-- Name: nineplan_schema; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.nineplan_schema (
    version integer NOT NULL
);


--
-- Name: nineplan_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.nineplan_sessions (
    name text NOT NULL,
    task_description text,
    created_at timestamp with time zone NOT NULL
);


--
-- Name: nineplan_creations seq; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nineplan_creations ALTER COLUMN seq SET DEFAULT nextval('public.nineplan_creations_seq_seq'::regclass);


--
-- Name: nineplan_plans seq; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nineplan_plans ALTER COLUMN seq SET DEFAULT nextval('public.nineplan_plans_seq_seq'::regclass);


--
-- Name: nineplan_requests seq; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nineplan_requests ALTER COLUMN seq SET DEFAULT nextval('public.nineplan_requests_seq_seq'::regclass);


--
-- Data for Name: nineplan_creations; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: nineplan_plans; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.nineplan_plans VALUES ('amber-quiet-otter', 'que01', 4, 'queued', 4, 'Review the report', 'Context of Review the report.', '', '', 'Do it step by step.', 'It works.', '', NULL, '2026-11-01 09:04:00+00', NULL, DEFAULT);
INSERT INTO public.nineplan_plans VALUES ('amber-quiet-otter', 'que02', 5, 'queued', 5, 'Publish the report', 'Context of Publish the report.', '', '', 'Do it step by step.', 'It works.', '', NULL, '2026-11-01 09:05:00+00', NULL, DEFAULT);
INSERT INTO public.nineplan_plans VALUES ('amber-quiet-otter', 'cmp01', 1, 'completed', NULL, 'Cache the price lookups', 'Context of Cache the price lookups.', '', 'cache.py', 'Do it step by step.', 'It works.', '- root cause is the cache TTL', 'Cached lookups for an hour; latency down 80%.', '2026-11-01 09:01:00+00', '2026-11-01 09:06:00+00', DEFAULT);
INSERT INTO public.nineplan_plans VALUES ('amber-quiet-otter', 'dsc01', 2, 'discarded', NULL, 'Try the old importer', 'Context of Try the old importer.', '', '', 'Do it step by step.', 'It works.', '- 2026-11-01T09:07:00Z Discarded: the importer is retired', NULL, '2026-11-01 09:02:00+00', '2026-11-01 09:07:00+00', DEFAULT);
INSERT INTO public.nineplan_plans VALUES ('amber-quiet-otter', 'act01', 3, 'active', NULL, 'Write the report', 'Context of Write the report.', '', '', 'Do it step by step.', 'It works.', '', NULL, '2026-11-01 09:03:00+00', NULL, DEFAULT);


--
-- Data for Name: nineplan_requests; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: nineplan_schema; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.nineplan_schema VALUES (1);


--
-- Data for Name: nineplan_sessions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.nineplan_sessions VALUES ('amber-quiet-otter', 'upgrade fixture from 0.1.0', '2026-11-01 09:00:00+00');


--
-- Name: nineplan_creations_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.nineplan_creations_seq_seq', 1, false);


--
-- Name: nineplan_plans_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.nineplan_plans_seq_seq', 10, true);


--
-- Name: nineplan_requests_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.nineplan_requests_seq_seq', 1, false);


--
-- Name: nineplan_creations nineplan_creations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nineplan_creations
    ADD CONSTRAINT nineplan_creations_pkey PRIMARY KEY (request_id);


--
-- Name: nineplan_plans nineplan_plans_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nineplan_plans
    ADD CONSTRAINT nineplan_plans_pkey PRIMARY KEY (session_name, id);


--
-- Name: nineplan_requests nineplan_requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nineplan_requests
    ADD CONSTRAINT nineplan_requests_pkey PRIMARY KEY (session_name, request_id);


--
-- Name: nineplan_sessions nineplan_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nineplan_sessions
    ADD CONSTRAINT nineplan_sessions_pkey PRIMARY KEY (name);


--
-- Name: nineplan_plans_active; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX nineplan_plans_active ON public.nineplan_plans USING btree (session_name) WHERE (status = 'active'::text);


--
-- Name: nineplan_plans_queue; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX nineplan_plans_queue ON public.nineplan_plans USING btree (session_name, queue_position) WHERE (status = 'queued'::text);


--
-- Name: nineplan_plans_search; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX nineplan_plans_search ON public.nineplan_plans USING gin (search);


--
-- Name: nineplan_plans_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX nineplan_plans_status ON public.nineplan_plans USING btree (session_name, status);


--
-- Name: nineplan_plans nineplan_plans_session_name_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nineplan_plans
    ADD CONSTRAINT nineplan_plans_session_name_fkey FOREIGN KEY (session_name) REFERENCES public.nineplan_sessions(name) ON DELETE CASCADE;


--
-- Name: nineplan_requests nineplan_requests_session_name_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nineplan_requests
    ADD CONSTRAINT nineplan_requests_session_name_fkey FOREIGN KEY (session_name) REFERENCES public.nineplan_sessions(name) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--

\unrestrict DIqpyBbso9Bt2zi8Ge10SMkOr00WWxrIQpT7DdiifERPjMtUjxN68lVsC7qXmyI

