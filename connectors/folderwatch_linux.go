package connectors

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// folderMask: no IN_MODIFY (a wake-up at every write, a file taken
// half-written), IN_CLOSE_WRITE instead; IN_CREATE for folders and links.
const folderMask = unix.IN_CREATE | unix.IN_CLOSE_WRITE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM |
	unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

type inotifyFolders struct {
	fd     int
	file   *os.File
	events chan fsnotify.Event
	errors chan error
	done   chan struct{}

	mu    sync.Mutex
	paths map[int]string // watch descriptor → folder
	wds   map[string]int
}

// NewFolderWatcher watches folders through inotify.
func NewFolderWatcher() (FolderWatcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	w := &inotifyFolders{fd: fd, file: os.NewFile(uintptr(fd), "inotify"),
		events: make(chan fsnotify.Event), errors: make(chan error), done: make(chan struct{}),
		paths: map[int]string{}, wds: map[string]int{}}
	go w.read()
	return w, nil
}

func (w *inotifyFolders) Events() <-chan fsnotify.Event { return w.events }
func (w *inotifyFolders) Errors() <-chan error          { return w.errors }

func (w *inotifyFolders) Add(dir string) error {
	dir = filepath.Clean(dir)
	w.mu.Lock()
	defer w.mu.Unlock()
	wd, err := unix.InotifyAddWatch(w.fd, dir, folderMask)
	if err != nil {
		return &os.PathError{Op: "watch", Path: dir, Err: err}
	}
	w.paths[wd], w.wds[dir] = dir, wd
	return nil
}

func (w *inotifyFolders) Remove(dir string) error {
	dir = filepath.Clean(dir)
	w.mu.Lock()
	defer w.mu.Unlock()
	wd, ok := w.wds[dir]
	if !ok {
		return errors.New("not watched: " + dir)
	}
	delete(w.wds, dir)
	delete(w.paths, wd)
	_, err := unix.InotifyRmWatch(w.fd, uint32(wd))
	return err
}

func (w *inotifyFolders) Close() error {
	err := w.file.Close() // ends the read in progress
	<-w.done
	return err
}

func (w *inotifyFolders) read() {
	defer close(w.done)
	defer close(w.events)
	defer close(w.errors)
	buf := make([]byte, 4096*(unix.SizeofInotifyEvent+unix.NAME_MAX+1)/16)
	for {
		n, err := w.file.Read(buf)
		if err != nil {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				w.errors <- fsnotify.ErrEventOverflow
				continue
			}
			if e, ok := w.event(int(ev.Wd), ev.Mask, string(name)); ok {
				w.events <- e
			}
		}
	}
}

// event turns one inotify event into fsnotify's, or none.
func (w *inotifyFolders) event(wd int, mask uint32, name string) (fsnotify.Event, bool) {
	w.mu.Lock()
	dir, ok := w.paths[wd]
	if ok && mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
		// the folder went: its watch ends (a moved one would still report
		// under its old name)
		delete(w.paths, wd)
		if w.wds[dir] == wd {
			delete(w.wds, dir)
		}
		if mask&unix.IN_MOVE_SELF != 0 {
			unix.InotifyRmWatch(w.fd, uint32(wd))
		}
	}
	w.mu.Unlock()
	if !ok {
		return fsnotify.Event{}, false
	}
	path := dir
	if name != "" {
		path = filepath.Join(dir, name)
	}
	switch {
	case mask&unix.IN_DELETE_SELF != 0:
		return fsnotify.Event{Name: dir, Op: fsnotify.Remove}, true
	case mask&unix.IN_MOVE_SELF != 0:
		return fsnotify.Event{Name: dir, Op: fsnotify.Rename}, true
	case mask&unix.IN_CLOSE_WRITE != 0:
		return fsnotify.Event{Name: path, Op: fsnotify.Write}, true
	case mask&unix.IN_MOVED_TO != 0:
		return fsnotify.Event{Name: path, Op: fsnotify.Create}, true
	case mask&unix.IN_MOVED_FROM != 0:
		return fsnotify.Event{Name: path, Op: fsnotify.Rename}, true
	case mask&unix.IN_DELETE != 0:
		return fsnotify.Event{Name: path, Op: fsnotify.Remove}, true
	case mask&unix.IN_CREATE != 0:
		// A new file of one link is a writer's open (a file moved in is
		// IN_MOVED_TO): its close tells. A folder, a symbolic link, a hard
		// link (two links at least), a device is there now.
		var st unix.Stat_t
		if mask&unix.IN_ISDIR == 0 && unix.Lstat(path, &st) == nil &&
			st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink == 1 {
			return fsnotify.Event{}, false
		}
		return fsnotify.Event{Name: path, Op: fsnotify.Create}, true
	}
	return fsnotify.Event{}, false
}
