! prog_regions_f: a user region from Fortran (module pioscope) around Fortran I/O.
! check_raw scenario "fortran". usage: prog_regions_f DIR
program prog_regions_f
  use pioscope
  implicit none
  character(len=4096) :: dir
  call get_command_argument(1, dir)
  call pioscope_region_begin("fortran phase")
  open(unit=10, file=trim(dir)//"/fortran.txt", status="replace", action="write")
  write(10, *) "hello from fortran"
  close(10)
  call pioscope_region_end()
end program prog_regions_f
