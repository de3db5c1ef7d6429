-- A small music store for the README's SQL session: two tables and a join view.
CREATE TABLE artist (artistid INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE album (albumid INTEGER PRIMARY KEY, title TEXT NOT NULL, artistid INTEGER NOT NULL REFERENCES artist (artistid), price NUMERIC(5,2));
CREATE VIEW album_info AS SELECT al.albumid, al.title, ar.name AS artist FROM album al JOIN artist ar ON al.artistid = ar.artistid;
INSERT INTO artist VALUES (1, 'AC/DC'), (2, 'Accept');
INSERT INTO album VALUES (1, 'For Those About To Rock', 1, 9.99), (2, 'Balls to the Wall', 2, NULL), (3, 'Restless and Wild', 2, 8.49);
